import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TensorMap } from '../../src/contracts/tensor.js';
import { ExperimentSchema } from '../../src/config/schema.js';
import { loadTextDataset, parsePrompts } from '../../src/dataset/text-dataset.js';
import { generationFigures, requestFigures } from '../../src/harness/generate/figures.js';
import { firstDivergence, gateRule, judgeRanks } from '../../src/harness/generate/gate.js';
import { runGenerationLoop, scoreTextWith, type LmStep } from '../../src/harness/generate/lm-loop.js';
import { byteTokens } from '../../src/harness/generate/tokens.js';
import { roofline } from '../../src/harness/generate/roofline.js';
import { memoryBandwidth } from '../../src/system/memory-bandwidth.js';

const CACHE = [1, 1, 8, 1];
const VOCAB = 256;

/**
 * A scripted LM step (not a model): the next token is the last input token + 1, the cache's slot `past` records the
 * token written there, and every call is logged, so the loop's scheduling and cache threading can be read back.
 */
function scriptedStep(log: string[]): LmStep {
  return async (feeds: TensorMap) => {
    const ids = Array.from(feeds.input_ids!.data as BigInt64Array, Number);
    const past = Number((feeds.past_length!.data as BigInt64Array)[0]);
    const key = Float32Array.from(feeds.past_key!.data as Float32Array);
    ids.forEach((t, i) => (key[past + i] = t));
    log.push(`${ids.length > 1 ? 'prefill' : 'decode'}@${past}:${Array.from(key.slice(0, past)).join(',')}`);
    const logits = new Float32Array(ids.length * VOCAB);
    logits[(ids.length - 1) * VOCAB + ((ids[ids.length - 1]! + 1) % VOCAB)] = 1;
    return {
      logits: { dtype: 'float32', dims: [1, ids.length, VOCAB], data: logits },
      present_key: { dtype: 'float32', dims: CACHE, data: key },
      present_value: { dtype: 'float32', dims: CACHE, data: key.slice() },
    };
  };
}

describe('the generation loop', () => {
  it('threads each request its own cache, runs prefills first and keeps at most `concurrency` requests in flight', async () => {
    const log: string[] = [];
    const traces = await runGenerationLoop(scriptedStep(log), { prompts: [[10, 11], [20, 21, 22], [30, 31]], maxNewTokens: 3, arrivalsNs: null, concurrency: 2, cacheShape: CACHE });
    expect(traces.map((t) => t.tokens)).toEqual([[12, 13, 14], [23, 24, 25], [32, 33, 34]]);
    // Pass 1: both admitted requests prefill; pass 2: one decode each; request 2 waits for a free slot.
    expect(log.slice(0, 4)).toEqual(['prefill@0:', 'prefill@0:', 'decode@2:10,11', 'decode@3:20,21,22']);
    expect(log.filter((l) => l.startsWith('prefill'))).toHaveLength(3);
    expect(log).toContain('decode@3:30,31,32');
    for (const t of traces) {
      expect(t.tokenNs).toHaveLength(3);
      expect(t.tokenNs[0]!).toBeGreaterThanOrEqual(t.arrivalNs);
      expect([...t.tokenNs].sort((a, b) => a - b)).toEqual(t.tokenNs);
    }
    // Closed loop at concurrency 2: request 2 arrives when request 0 (its slot) finishes.
    expect(traces[2]!.arrivalNs).toBeGreaterThanOrEqual(traces[0]!.tokenNs[2]!);
  });

  it('stops between steps once its signal is aborted (an abandoned loop does not run on)', async () => {
    const log: string[] = [];
    const controller = new AbortController();
    const step = scriptedStep(log);
    const stopping: LmStep = async (feeds) => {
      if (log.length === 2) controller.abort(new Error('cell timed out'));
      return step(feeds);
    };
    await expect(runGenerationLoop(stopping, { prompts: [[1, 2]], maxNewTokens: 10, arrivalsNs: null, concurrency: 1, cacheShape: CACHE }, controller.signal)).rejects.toThrow(/cell timed out/);
    expect(log).toHaveLength(3);
  });

  it('issues no request before its arrival', async () => {
    const traces = await runGenerationLoop(scriptedStep([]), { prompts: [[1, 2], [3, 4]], maxNewTokens: 2, arrivalsNs: [0, 30e6], concurrency: 2, cacheShape: CACHE });
    expect(traces[1]!.arrivalNs).toBe(30e6);
    expect(traces[1]!.tokenNs[0]!).toBeGreaterThanOrEqual(30e6);
  });
});

describe('perplexity', () => {
  it('equals a hand computation of -ln softmax over the windows', async () => {
    // Logits j * 0.01 + (j === next guess) at every position: a fixed, non-uniform distribution per position.
    const step: LmStep = async (feeds) => {
      const ids = Array.from(feeds.input_ids!.data as BigInt64Array, Number);
      const logits = new Float32Array(ids.length * VOCAB);
      ids.forEach((t, i) => {
        for (let j = 0; j < VOCAB; j++) logits[i * VOCAB + j] = j * 0.01 + (j === (t * 7) % VOCAB ? 2 : 0);
      });
      return { logits: { dtype: 'float32', dims: [1, ids.length, VOCAB], data: logits }, present_key: feeds.past_key!, present_value: feeds.past_value! };
    };
    const tokens = Array.from({ length: 23 }, (_, i) => (i * 37 + 5) % VOCAB);
    const window = 8;
    let hand = 0;
    let count = 0;
    for (let s = 0; s < tokens.length; s += window) {
      const chunk = tokens.slice(s, s + window);
      for (let t = 0; t + 1 < chunk.length; t++) {
        const z = Array.from({ length: VOCAB }, (_, j) => Math.exp(Math.fround(j * 0.01 + (j === (chunk[t]! * 7) % VOCAB ? 2 : 0))));
        const next = chunk[t + 1]!;
        hand += -Math.log(z[next]! / z.reduce((a, v) => a + v, 0));
        count++;
      }
    }
    const scored = await scoreTextWith(step, tokens, window, CACHE);
    expect(scored.predicted).toBe(count);
    expect(count).toBe(7 + 7 + 6);
    expect(scored.nllSum).toBeCloseTo(hand, 9);
  });

  it('is ln 256 per token for uniform logits (the baseline)', async () => {
    const step: LmStep = async (feeds) => ({
      logits: { dtype: 'float32', dims: [1, feeds.input_ids!.dims[1]!, VOCAB], data: new Float32Array(feeds.input_ids!.dims[1]! * VOCAB) },
      present_key: feeds.past_key!,
      present_value: feeds.past_value!,
    });
    const scored = await scoreTextWith(step, Array.from({ length: 40 }, (_, i) => i), 16, CACHE);
    expect(scored.nllSum / scored.predicted).toBeCloseTo(Math.log(256), 12);
  });
});

describe('generation figures', () => {
  const trace = (arrival: number, tokens: number[]) => ({ arrivalNs: arrival, tokens: tokens.map((_, i) => i), tokenNs: tokens });

  it('takes TTFT from arrival, each gap, TPOT and end to end from a request trace', () => {
    const r = requestFigures(trace(1e6, [5e6, 6e6, 8e6]), 4);
    expect(r).toEqual({ prompt_tokens: 4, output_tokens: 3, arrival_ns: 1e6, ttft_ns: 4e6, e2e_ns: 7e6, itl_ns: [1e6, 2e6] });
  });

  it('counts goodput as vLLM does: requests within the TTFT SLO and whose TPOT is within the ITL SLO, per second', () => {
    const cfg = ExperimentSchema.shape.generate.unwrap().parse({ max_new_tokens: 3, slo: { ttft_ms: 5, itl_ms: 1.5 } });
    // Request 0: ttft 4 ms, tpot 1 ms (good). Request 1: ttft 6 ms (too slow). Request 2: ttft 2 ms, tpot 3 ms (too slow).
    const session = { traces: [trace(0, [4e6, 5e6, 6e6]), trace(0, [6e6, 7e6, 8e6]), trace(8e6, [10e6, 13e6, 16e6])], metrics: {} };
    const f = generationFigures([session], [[1, 2], [3], [4, 5, 6]], cfg, 'server', 2, 100);
    // The session lasts 16 ms from the first arrival to the last token: 9 tokens, 15 with the 6 prompt tokens.
    expect(f.result.output_tokens_per_s).toBeCloseTo(9 / 0.016, 9);
    expect(f.result.total_tokens_per_s).toBeCloseTo(15 / 0.016, 9);
    expect(f.result.request_throughput).toBeCloseTo(3 / 0.016, 9);
    expect(f.result.good_requests).toBe(1);
    expect(f.result.goodput_rps).toBeCloseTo(1 / 0.016, 9);
    expect(f.result.ttft.p50).toBe(4e6);
    expect(f.result.itl.n).toBe(6);
    expect(f.result.tpot.max).toBe(3e6);
    expect(f.sessions[0]!.throughput_sps).toBeCloseTo(9 / 0.016, 9);
  });
});

describe('the token-for-token gate', () => {
  it('reports the first request and position that differ, and a continuation cut short', () => {
    expect(firstDivergence([[1, 2, 3], [4, 5]], [[1, 2, 3], [4, 5]])).toBeNull();
    expect(firstDivergence([[1, 2, 3], [4, 5]], [[1, 2, 3], [4, 6]])).toEqual({ request: 1, position: 1, expected: 5, got: 6 });
    expect(firstDivergence([[1, 2, 3]], [[1, 2]])).toEqual({ request: 0, position: 2, expected: 3, got: -1 });
  });
});

describe('the roofline of a generate Profile', () => {
  it('puts prefill FLOP/s against the peak and decode bytes/s against the bandwidth, from single-stream requests', () => {
    const lm = { layout: 'hf_decoder', cacheShape: null, capacity: 256, kvBytesPerToken: 1000, layers: 2, kvHeads: 2, headDim: 16 } as const;
    // 10 prompt tokens in 1 ms; then 9 more tokens in 9 ms (1 ms each).
    const requests = [{ prompt_tokens: 10, output_tokens: 10, arrival_ns: 0, ttft_ns: 1e6, e2e_ns: 10e6, itl_ns: Array(9).fill(1e6) }];
    const r = roofline({ parameters: 1e6, executed: 'bf16', lm, maxNewTokens: 10, scenario: 'single_stream', requests, peak: { precision: 'bf16', ops_per_s: 1e11, formula: 'f' }, bandwidth: { bytes_per_s: 1e10, method: 'm' } });
    expect(r.prefill).toEqual({ flops_per_token: 2e6, flops_per_s: 2e10, peak_ops_per_s: 1e11, share_of_peak: 0.2 });
    // bf16 weights (2 bytes each) + the cache at 10 + 10/2 tokens, per 1 ms.
    expect(r.decode.bytes_per_token).toBe(2e6 + 15 * 1000);
    expect(r.decode.bytes_per_s).toBeCloseTo((2e6 + 15e3) * 1e3, 3);
    expect(r.decode.share_of_bandwidth).toBeCloseTo(0.2015, 6);
    expect(roofline({ parameters: 1e6, executed: 'fp32', lm, maxNewTokens: 10, scenario: 'server', requests, peak: null, bandwidth: { bytes_per_s: 1e10, method: 'm' } }).prefill).toBeNull();
  });

  it('measures the memory bandwidth once, stating how', () => {
    const first = memoryBandwidth();
    expect(first.bytes_per_s).toBeGreaterThan(0);
    expect(first.method).toMatch(/one thread copying 256 MiB/);
    expect(memoryBandwidth()).toBe(first);
  });
});

describe('the gate of an engine below fp32', () => {
  it('ranks reference tokens within the top k, naming the first that is not', () => {
    expect(gateRule('fp32', null, true)).toBe('exact');
    expect(gateRule('bf16', null, true)).toBe('top_k');
    expect(gateRule('fp32', 'int4', true)).toBe('top_k');
    expect(gateRule('bf16', null, false)).toBe('exact');
    expect(judgeRanks([[0, 1], [4, 0]], [[7, 8], [9, 10]], 5)).toEqual({ worst: 4, failure: null });
    expect(judgeRanks([[0, 5], [9]], [[7, 8], [9]], 5)).toEqual({ worst: 9, failure: { request: 0, position: 1, token: 8, rank: 5 } });
  });
});

describe('text datasets', () => {
  it('reads prompts as UTF-8 bytes and names the line of a malformed one', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pbh-text-'));
    const good = path.join(dir, 'p.jsonl');
    await writeFile(good, '{"prompt": "ab"}\n\n{"prompt": "é"}\n');
    const d = await loadTextDataset({ name: 'p', prompts: good });
    expect(d.texts).toEqual(['ab', 'é']);
    expect(byteTokens(d, 8).prompts).toEqual([[97, 98], [0xc3, 0xa9]]);
    expect(() => d.read(0, 1)).toThrow(/feeds the generate workload only/);
    const bad = path.join(dir, 'bad.jsonl');
    await writeFile(bad, '{"prompt": "ab"}\n{"text": "x"}\n');
    await expect(loadTextDataset({ name: 'b', prompts: bad })).rejects.toThrow(/bad\.jsonl line 2: .*each line must be \{"prompt": "\.\.\."\}/);
  });

  it('takes ShareGPT conversations (the first human turn), as a JSON array or JSONL', async () => {
    const conv = (human: string) => ({ id: 'x', conversations: [{ from: 'human', value: human }, { from: 'gpt', value: 'answer' }] });
    expect(parsePrompts('a.json', JSON.stringify([conv('first'), { conversations: [{ from: 'gpt', value: 'no human turn' }] }, conv('second')]))).toEqual({ texts: ['first', 'second'], form: 'sharegpt' });
    expect(parsePrompts('a.jsonl', `${JSON.stringify(conv('one'))}\n${JSON.stringify(conv('two'))}\n`, 1)).toEqual({ texts: ['one'], form: 'sharegpt' });
    expect(() => parsePrompts('b.json', '[{"conversation": []}]')).toThrow(/b\.json entry 0: not a ShareGPT conversation/);
  });

  it('draws seeded random prompts within the length range, and counts the bytes perplexity predicts', async () => {
    const random = { count: 20, inputLen: 10, rangeRatio: 0.5, seed: 3 };
    const d = await loadTextDataset({ name: 'r', random });
    const a = byteTokens(d, 4).prompts;
    expect(a).toHaveLength(20);
    expect(a.every((p) => p.length >= 5 && p.length <= 15 && p.every((t) => t >= 0 && t < 256))).toBe(true);
    expect(new Set(a.map((p) => p.length)).size).toBeGreaterThan(1);
    expect(byteTokens(d, 4).prompts).toEqual(a);
    expect(byteTokens(await loadTextDataset({ name: 'r', random: { ...random, seed: 4 } }), 4).prompts).not.toEqual(a);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pbh-text-'));
    await writeFile(path.join(dir, 'held.txt'), 'abcdefghij');
    const held = byteTokens(await loadTextDataset({ name: 'h', random, heldOut: path.join(dir, 'held.txt') }), 4);
    // Windows abcd, efgh, ij: each predicts all but its first byte.
    expect(held.heldOutBytesPredicted).toBe(3 + 3 + 1);
  });
});
