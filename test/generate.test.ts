import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { LM } from './suite.js';

const MAX_NEW = 12;
const PROMPTS = 6;

function lmConfig(name: string, engines: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    dataset: { kind: 'text', prompts: path.join(LM, 'data', 'prompts.jsonl'), held_out: path.join(LM, 'data', 'held_out.txt'), limit: PROMPTS },
    models: [{ name: 'byte_lm', path: path.join(LM, 'models', 'byte_lm.onnx'), weights: 'trained' }],
    generate: { max_new_tokens: MAX_NEW, max_concurrency: 3, slo: { ttft_ms: 1000, itl_ms: 1000 }, gate_prompts: 3 },
    engines,
    batch_sizes: [1],
    warmup_batches: 1,
    sessions: 2,
    ...extra,
  };
}

interface Row {
  engine: string;
  status: string;
  error: string | null;
  generation: string | null;
  facts: string;
}

/** The held-out NLL the generator computed with jax (the model's metadata): an independent implementation. */
async function jaxNll(): Promise<number> {
  const meta = JSON.parse(await readFile(path.join(LM, 'lm.json'), 'utf8')) as { held_out_nll: number };
  return meta.held_out_nll;
}

describe('generate workload on the bundled byte LM', () => {
  it('measures TTFT, ITL and tokens/s on onnxruntime and OpenVINO, gates them token for token, scores perplexity; TVM fails with its own reason', async () => {
    const dir = await tempDir('pbh-generate-');
    const db = path.join(dir, 'gen.duckdb');
    const config = await writeConfig(
      dir,
      'gen.yaml',
      lmConfig('generate-test', [
        // In the harness's process, so its generation loop is the TypeScript one the worker's Python loop is held to.
        { name: 'onnxruntime', options: { intraOpNumThreads: 1 }, process: 'harness' },
        { name: 'openvino' },
        { name: 'tvm' },
        { name: 'onnxruntime', label: 'ort-server', options: { intraOpNumThreads: 1 }, process: 'harness', scenario: { kind: 'server', target_qps: 40 } },
        { name: 'openvino', label: 'ov-server', scenario: { kind: 'server', target_qps: 40 } },
      ]),
    );
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code, r.stderr).toBe(1); // TVM's failure makes the run exit 1; every other cell is ok
    const rows = await queryJson<Row>(
      db,
      "SELECT coalesce(engine_label, engine_name) AS engine, status, error, json_extract(profile_json, '$.generation')::VARCHAR AS generation, engine_facts::VARCHAR AS facts FROM profiles ORDER BY created_at",
    );
    const by = new Map(rows.map((row) => [row.engine, row]));
    expect(by.get('tvm')).toMatchObject({ status: 'failed' });
    expect(by.get('tvm')!.error).toMatch(/TVM's ONNX frontend cannot import .*byte_lm\.onnx/);
    const nll = await jaxNll();
    for (const engine of ['onnxruntime', 'openvino', 'ort-server', 'ov-server']) {
      const row = by.get(engine)!;
      expect(row.status, `${engine}: ${row.error}`).toBe('ok');
      const g = JSON.parse(row.generation!);
      const server = engine.endsWith('server');
      expect(g.scenario).toBe(server ? 'server' : 'single_stream');
      expect(g.concurrency).toBe(server ? 3 : 1);
      expect(g.requests).toBe(PROMPTS);
      expect(g.output_tokens).toBe(PROMPTS * MAX_NEW * 2);
      expect(g.ttft.n).toBe(PROMPTS * 2);
      expect(g.itl.n).toBe(PROMPTS * (MAX_NEW - 1) * 2);
      expect(g.ttft.p50).toBeGreaterThan(0);
      expect(g.ttft.p50).toBeLessThanOrEqual(g.ttft.p99);
      expect(g.itl.p50).toBeLessThanOrEqual(g.itl.p99);
      // Session 0's raw requests add up to its figures: e2e = ttft + every gap.
      for (const req of g.per_request) {
        expect(req.itl_ns).toHaveLength(MAX_NEW - 1);
        expect(req.e2e_ns).toBeCloseTo(req.ttft_ns + req.itl_ns.reduce((a: number, v: number) => a + v, 0), -1);
      }
      expect(g.total_tokens_per_s).toBeGreaterThan(g.output_tokens_per_s);
      expect(g.good_requests).toBeLessThanOrEqual(PROMPTS * 2);
      expect(g.goodput_rps).toBeLessThanOrEqual(g.request_throughput * (1 + 1e-9));
      expect(g.kv_cache_bytes).toBe(2 * 2 * 4 * 128 * 16 * 4);
      // Perplexity agrees with the generator's own jax computation on the same windows.
      expect(g.perplexity.nll_nats).toBeCloseTo(nll, 3);
      expect(g.perplexity.nll_nats).toBeLessThan(Math.log(256));
      if (engine === 'openvino' || engine === 'ov-server') {
        // OpenVINO's loop is the worker's Python one; its greedy tokens match onnxruntime's TypeScript loop.
        expect(g.gate).toMatchObject({ reference_engine: 'onnxruntime', prompts: 3, passed: true, first_divergence: null });
        expect(JSON.parse(row.facts).generation_executor).toBe('runtime');
      } else {
        // The reference engine is not gated against itself; onnxruntime runs in the harness's process.
        expect(g.gate).toBeNull();
        expect(JSON.parse(row.facts).generation_executor).toBe('harness');
      }
      if (server) {
        expect(g.request_rate).toBe(40);
        const arrivals = g.per_request.map((q: { arrival_ns: number }) => q.arrival_ns);
        expect(arrivals).toEqual([...arrivals].sort((a, b) => a - b));
      }
    }
    // Each request's end to end is a raw `query` sample, like a server query's.
    const samples = await queryJson<{ engine: string; n: number }>(
      db,
      "SELECT coalesce(engine_label, engine_name) AS engine, count(*)::INTEGER AS n FROM samples JOIN profiles USING (profile_id) WHERE boundary = 'query' GROUP BY ALL ORDER BY engine",
    );
    expect(samples).toEqual(['onnxruntime', 'openvino', 'ort-server', 'ov-server'].map((engine) => ({ engine, n: PROMPTS * 2 })));
    const board = await queryJson<{ engine_entry: string; ttft_p50_ms: number; itl_p99_ms: number; output_tokens_per_s: number; perplexity: number }>(
      db,
      'SELECT engine_entry, ttft_p50_ms, itl_p99_ms, output_tokens_per_s, perplexity FROM leaderboard ORDER BY engine_entry',
    );
    expect(board.map((b) => b.engine_entry)).toEqual(['onnxruntime', 'openvino', 'ort-server', 'ov-server']);
    for (const b of board) {
      expect(b.ttft_p50_ms).toBeGreaterThan(0);
      expect(b.itl_p99_ms).toBeGreaterThan(0);
      expect(b.output_tokens_per_s).toBeGreaterThan(0);
      expect(b.perplexity).toBeCloseTo(Math.exp(nll), 1);
    }
  }, 300_000);

  it('stores an engine whose greedy continuation diverges as invalid_output, naming the first divergence', async () => {
    const dir = await tempDir('pbh-generate-gate-');
    const db = path.join(dir, 'gate.duckdb');
    const config = await writeConfig(
      dir,
      'gate.yaml',
      lmConfig('generate-gate', [{ name: 'onnxruntime' }, { name: 'onnxruntime-perturbed' }], {
        plugins: [path.resolve(import.meta.dirname, 'fixtures', 'perturbed-lm-plugin.mjs')],
        sessions: 1,
      }),
    );
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code).toBe(1);
    const rows = await queryJson<Row>(db, "SELECT engine_name AS engine, status, error, NULL AS generation, '' AS facts FROM profiles ORDER BY engine_name");
    expect(rows.map((x) => [x.engine, x.status])).toEqual([
      ['onnxruntime', 'ok'],
      ['onnxruntime-perturbed', 'invalid_output'],
    ]);
    // Prefill is untouched, so token 0 matches; the first decoded token is the true argmax + 1.
    const m = /greedy continuation of prompt 0 differs from onnxruntime's at generated token 1: onnxruntime chose (\d+), onnxruntime-perturbed chose (\d+)/.exec(rows[1]!.error ?? '');
    expect(m, rows[1]!.error ?? '').not.toBeNull();
    expect(Number(m![2])).toBe((Number(m![1]) + 1) % 256);
    const ranked = await queryJson<{ engine: string }>(db, 'SELECT engine FROM leaderboard');
    expect(ranked.map((x) => x.engine)).toEqual(['onnxruntime']);
  }, 180_000);
});
