import { copyFile, cp, mkdir, writeFile } from 'node:fs/promises';
import { execa } from 'execa';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { findVenvPython } from '../packages/core/src/worker/venv.js';
import { pbh, tempDir, writeConfig } from './helpers.js';
import { buildLlms, hf, llmConfig, llmRows } from './llms.js';
import { LLMS } from './suite.js';

const MAX_NEW = 8;
const PROMPTS = 4;

describe('LLMs as users have them (python/generate_llms.py: Llama with GQA, GPT-2)', () => {
  beforeAll(buildLlms, 600_000);

  it('runs Hugging Face folders on ONNX Runtime, OpenVINO, transformers and the LLM runtimes, each gated token for token', async () => {
    const dir = await tempDir('pbh-llm-');
    const db = path.join(dir, 'llm.duckdb');
    const engines = [
      { name: 'onnxruntime', options: { intraOpNumThreads: 1 } },
      { name: 'openvino', options: { threads: 1 } },
      { name: 'transformers', options: { threads: 1 } },
      { name: 'transformers-generate', options: { threads: 1 } },
      { name: 'onnxruntime-genai', options: { threads: 1 } },
      { name: 'openvino-genai', options: { threads: 1 } },
    ];
    const config = await writeConfig(dir, 'llm.yaml', llmConfig('llm-test', [hf('llama_gqa'), hf('gpt2')], engines));
    const r = await pbh(['run', config, '--db', db], { timeoutMs: 900_000 });
    // ONNX Runtime GenAI's builder does not take GPT-2: that one cell fails, with the builder's reason.
    expect(r.code, r.stderr).toBe(1);
    const all = await llmRows(db);
    const genaiGpt2 = all.find((x) => x.model === 'gpt2' && x.engine === 'onnxruntime-genai')!;
    expect(genaiGpt2.status).toBe('failed');
    expect(genaiGpt2.error).toMatch(/model builder could not build .*gpt2.*Run this model on onnxruntime, openvino or transformers/s);
    for (const model of ['llama_gqa', 'gpt2']) {
      const ok = all.filter((x) => x.model === model && x.status === 'ok');
      expect(ok.map((x) => x.engine).sort()).toEqual(['onnxruntime', 'onnxruntime-genai', 'openvino', 'openvino-genai', 'transformers', 'transformers-generate'].filter((e) => model === 'llama_gqa' || e !== 'onnxruntime-genai'));
      const perplexities: number[] = [];
      for (const row of ok) {
        const g = JSON.parse(row.generation!);
        expect(g.model_layout).toBe('hf_decoder');
        expect(g.tokenizer).toMatchObject({ kind: 'tokenizer.json', path: path.join(LLMS, model, 'hf', 'tokenizer.json'), vocab_size: 512 });
        expect(g.tokenizer.sha256).toMatch(/^[0-9a-f]{64}$/);
        expect(g.prompt_source).toBe('jsonl');
        expect(g.output_tokens).toBe(PROMPTS * MAX_NEW);
        // Byte-level BPE: fewer tokens than the prompts' 32 to 128 bytes.
        expect(g.prompt_tokens.max).toBeLessThan(128);
        // The KV cache of the longest request: 2 layers x (key, value) x kv heads x 16 x 4 bytes per token.
        const kvHeads = model === 'llama_gqa' ? 2 : 4;
        expect(g.kv_cache_bytes).toBe(2 * 2 * kvHeads * 16 * 4 * (g.prompt_tokens.max + MAX_NEW));
        // Decode streams every weight per token: its bytes/s and its share of the measured bandwidth are positive.
        expect(g.roofline.decode.bytes_per_token).toBeGreaterThan(4 * 100_000);
        expect(g.roofline.decode.share_of_bandwidth).toBeGreaterThan(0);
        expect(g.roofline.prefill.flops_per_s).toBeGreaterThan(0);
        if (row.engine !== 'onnxruntime') expect(g.gate, `${model} on ${row.engine}`).toMatchObject({ reference_engine: 'onnxruntime', passed: true });
        if (row.engine === 'openvino') {
          // OpenVINO runs the folder as OpenVINO runs LLMs: optimum-intel's stateful IR, exported once.
          expect(JSON.parse(row.facts!)).toMatchObject({ exporter: expect.stringMatching(/^optimum-intel .*--weight-format fp32/), kv_cache_precision: 'f32' });
          expect(JSON.parse(row.facts!).ran).toMatch(/openvino-ir-[^/]+-fp32\/openvino_model\.xml, the IR \(stateful/);
        }
        if (row.engine === 'openvino-genai') {
          expect(g.served).toBe('batched');
          expect(g.perplexity).toBeNull();
          expect(g.perplexity_unavailable).toMatch(/gives no logits/);
          expect(Object.keys(g.runtime_reported).sort()).toEqual(['issue_late_ms', 'queue_ms', 'tpot_ms', 'ttft_ms']);
        } else {
          // onnxruntime-genai and transformers-generate are timed on the runtime's own loop (generate_next_token,
          // generate), one request at a time; their logits score the text.
          expect(g.served).toBe(['onnxruntime-genai', 'transformers-generate'].includes(row.engine) ? 'one_at_a_time' : 'interleaved');
          expect(g.perplexity.bits_per_byte).toBeGreaterThan(0);
          expect(g.perplexity.bits_per_byte).toBeLessThan(8);
          expect(g.perplexity.nll_nats).toBeLessThan(g.perplexity.uniform_nll_nats);
          perplexities.push(g.perplexity.nll_nats);
        }
      }
      // Five implementations of one model score the same text alike (fp32 everywhere).
      expect(Math.max(...perplexities) - Math.min(...perplexities), `${model}: ${perplexities.join(', ')}`).toBeLessThan(1e-3);
      const source = JSON.parse(ok.find((x) => x.engine === 'onnxruntime')!.source!);
      expect(source).toMatchObject({ path: path.join(LLMS, model, 'hf'), format: 'hf_transformers' });
      expect(source.exporter).toMatch(/optimum-onnx main_export/);
    }
  }, 900_000);

  it('serves concurrent requests through OpenVINO GenAI\'s continuous batching, gated token for token', async () => {
    const dir = await tempDir('pbh-llm-batched-');
    const db = path.join(dir, 'batched.duckdb');
    // 16 requests of 16 tokens, Poisson at 1000/s, at most 4 in flight: the pipeline batches them at each step.
    const engines = [{ name: 'openvino-genai', options: { threads: 1 }, scenario: { kind: 'server', target_qps: 1000, max_concurrency: 4 } }];
    const config = await writeConfig(dir, 'batched.yaml', llmConfig('llm-batched', [hf('llama_gqa')], engines, { prompts: 16, maxNew: 16, generate: { perplexity: false } }));
    const r = await pbh(['run', config, '--db', db], { timeoutMs: 300_000 });
    const [row] = await llmRows(db);
    expect(row!.status, `${row!.error}\n${r.stderr.slice(-2000)}`).toBe('ok');
    const g = JSON.parse(row!.generation!);
    expect(g).toMatchObject({ served: 'batched', scenario: 'server', concurrency: 4, request_rate: 1000, output_tokens: 16 * 16, token_count: null });
    expect(g.gate).toMatchObject({ reference_engine: 'onnxruntime', passed: true, rule: 'exact' });
    // The worker's loop is judged like a server's client: how late it added each request, from the scheduled arrivals.
    expect(g.issue).toMatchObject({ late_requests: expect.any(Number) });
    expect(JSON.parse(row!.scenario!)).toMatchObject({ kind: 'server', executor: 'runtime', settings: { concurrency: 4, request_rate: 1000 } });
    const facts = JSON.parse(row!.facts!);
    expect(facts.scheduler).toMatch(/max_num_seqs = its concurrency, num_kv_blocks/);
    expect(typeof facts.kv_cache_precision).toBe('string');
    // Requests overlap: one's first token comes before an earlier request's last (one at a time, it never could).
    const reqs: { arrival_ns: number; ttft_ns: number; e2e_ns: number }[] = g.per_request;
    const overlapping = reqs.some((later, j) => reqs.slice(0, j).some((earlier) => later.arrival_ns + later.ttft_ns < earlier.arrival_ns + earlier.e2e_ns));
    expect(overlapping, JSON.stringify(reqs)).toBe(true);
  }, 300_000);

  it('runs an Optimum export as a user brings it, and says what an engine cannot run and why', async () => {
    const dir = await tempDir('pbh-llm-onnx-');
    const db = path.join(dir, 'onnx.duckdb');
    // The same export without its tokenizer beside it.
    const bare = path.join(dir, 'bare');
    await mkdir(bare);
    await copyFile(path.join(LLMS, 'qwen2', 'onnx', 'model.onnx'), path.join(bare, 'model.onnx'));
    const models = [
      { name: 'qwen2_optimum', path: path.join(LLMS, 'qwen2', 'onnx', 'model.onnx') },
      { name: 'qwen2_no_tokenizer', path: path.join(bare, 'model.onnx') },
      // optimum-intel's IR folder and a GenAI folder run as they are.
      { name: 'qwen2_ir', path: path.join(LLMS, 'qwen2', 'openvino') },
      { name: 'qwen2_genai', path: path.join(LLMS, 'qwen2', 'genai') },
    ];
    const engines = [{ name: 'onnxruntime' }, { name: 'openvino' }, { name: 'transformers' }, { name: 'onnxruntime-genai', options: { threads: 1 } }];
    const config = await writeConfig(dir, 'onnx.yaml', llmConfig('llm-onnx', models, engines));
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code).toBe(1);
    const by = new Map((await llmRows(db)).map((x) => [`${x.model}/${x.engine}`, x]));
    for (const engine of ['onnxruntime', 'openvino']) expect(by.get(`qwen2_optimum/${engine}`)?.status, by.get(`qwen2_optimum/${engine}`)?.error ?? '').toBe('ok');
    expect(JSON.parse(by.get('qwen2_optimum/openvino')!.generation!).gate).toMatchObject({ passed: true });
    expect(by.get('qwen2_optimum/transformers')).toMatchObject({ status: 'failed' });
    expect(by.get('qwen2_optimum/transformers')!.error).toMatch(/not a Hugging Face folder .*Name that folder in models\[\]\.path/);
    // The IR: rebuilt from its own weights for ONNX Runtime and the analysis (held to the IR's logits); OpenVINO runs
    // the IR itself, its cache in each request's state, gated token for token against ONNX Runtime.
    for (const engine of ['onnxruntime', 'openvino']) {
      const row = by.get(`qwen2_ir/${engine}`)!;
      expect(row.status, row.error ?? '').toBe('ok');
      const source = JSON.parse(row.source!);
      expect(source).toMatchObject({ format: 'openvino_ir', path: path.join(LLMS, 'qwen2', 'openvino') });
      expect(source.exporter).toMatch(/weights read from the IR's constants .*logits within \S+ of the IR's on a \d+-token probe\), then optimum-onnx main_export/);
      if (engine !== 'onnxruntime') expect(JSON.parse(row.generation!).gate).toMatchObject({ passed: true, rule: 'exact' });
    }
    const irFacts = JSON.parse(by.get('qwen2_ir/openvino')!.facts!);
    expect(irFacts).toMatchObject({ folder: path.join(LLMS, 'qwen2', 'openvino'), kv_cache_precision: 'f32' });
    expect(irFacts.ran).toMatch(/qwen2\/openvino\/openvino_model\.xml, the IR \(stateful/);
    expect(JSON.parse(by.get('qwen2_optimum/openvino')!.facts!).ran).toBeUndefined();
    expect(by.get('qwen2_ir/transformers')!.error).toMatch(/qwen2\/openvino is an OpenVINO IR folder, not a Hugging Face folder.*Name the Hugging Face folder it was made from/);
    // The GenAI folder: onnxruntime-genai runs the folder itself, ONNX Runtime and OpenVINO its decoder graph (the
    // builder's contrib ops included), each gated against ONNX Runtime; transformers needs the Hugging Face folder.
    for (const engine of ['onnxruntime', 'openvino', 'onnxruntime-genai']) {
      const row = by.get(`qwen2_genai/${engine}`)!;
      expect(row.status, row.error ?? '').toBe('ok');
      expect(JSON.parse(row.source!)).toMatchObject({ format: 'onnxruntime_genai', path: path.join(LLMS, 'qwen2', 'genai') });
      if (engine !== 'onnxruntime') expect(JSON.parse(row.generation!).gate).toMatchObject({ passed: true });
    }
    expect(JSON.parse(by.get('qwen2_genai/onnxruntime-genai')!.facts!)).toMatchObject({ built: false, folder: path.join(LLMS, 'qwen2', 'genai') });
    expect(by.get('qwen2_genai/transformers')!.error).toMatch(/qwen2\/genai is an ONNX Runtime GenAI folder, not a Hugging Face folder/);
    expect(by.get('qwen2_optimum/onnxruntime-genai')!.error).toMatch(/neither an ONNX Runtime GenAI folder .* nor a Hugging Face folder/);
    for (const engine of ['onnxruntime', 'openvino']) {
      expect(by.get(`qwen2_no_tokenizer/${engine}`)!.error).toMatch(/has no tokenizer\.json in its folder or beside its file .*tokenizer\.json, tokenizer_config\.json/);
    }
  }, 600_000);

  it("runs optimum-intel's IRs (compressed, stateless) on OpenVINO and OpenVINO GenAI as exported and on ONNX Runtime as their weights decompress, and refuses an IR its config does not fit", async () => {
    const dir = await tempDir('pbh-llm-ir-');
    const db = path.join(dir, 'ir.duckdb');
    const venv = findVenvPython()!;
    // As a user exports it: NNCF's int8 weights (GPT-2: Conv1D weights the IR keeps transposed, the head tied to the embedding).
    const int8 = path.join(dir, 'gpt2-int8');
    const exportIr = async (model: string, out: string, ...flags: string[]) => {
      const done = await execa(venv.python, ['-m', 'optimum.commands.optimum_cli', 'export', 'openvino', '--model', path.join(LLMS, model, 'hf'), '--task', 'text-generation-with-past', ...flags, out], { env: { ...process.env, USE_TF: '0' }, reject: false });
      expect(done.exitCode, done.stderr.slice(-2000)).toBe(0);
    };
    await exportIr('gpt2', int8, '--weight-format', 'int8');
    // The cache as inputs instead of state: ONNX Runtime runs its rebuilt model; the GenAI pipeline needs state.
    const stateless = path.join(dir, 'llama-stateless');
    await exportIr('llama_gqa', stateless, '--disable-stateful');
    // The Llama IR beside Qwen2's config.json (attention biases the IR does not hold, the head tied to the embedding).
    const mismatched = path.join(dir, 'mismatched');
    await cp(path.join(LLMS, 'llama_gqa', 'openvino'), mismatched, { recursive: true });
    await copyFile(path.join(LLMS, 'qwen2', 'hf', 'config.json'), path.join(mismatched, 'config.json'));
    const models = [
      { name: 'gpt2_int8', path: int8 },
      { name: 'mismatched', path: mismatched },
      { name: 'stateless', path: stateless },
    ];
    const engines = [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }, { name: 'openvino', options: { threads: 1 } }, { name: 'openvino-genai', options: { threads: 1 } }];
    const r = await pbh(['run', await writeConfig(dir, 'ir.yaml', llmConfig('llm-ir', models, engines)), '--db', db], { timeoutMs: 600_000 });
    expect(r.code).toBe(1);
    const by = new Map((await llmRows(db)).map((x) => [`${x.model}/${x.engine}`, x]));
    for (const engine of ['onnxruntime', 'openvino-genai']) {
      const row = by.get(`gpt2_int8/${engine}`)!;
      expect(row.status, row.error ?? '').toBe('ok');
      expect(JSON.parse(row.source!).exporter).toMatch(/\d+ u8; .*decompressed by OpenVINO as the IR computes them\), logits within/);
    }
    expect(JSON.parse(by.get('gpt2_int8/openvino-genai')!.precision!)).toMatchObject({ executed: 'fp32', weights: 'int8' });
    expect(JSON.parse(by.get('gpt2_int8/openvino-genai')!.facts!)).toMatchObject({ exported: false, folder: int8 });
    // ONNX Runtime runs the weights the IR decompresses to: OpenVINO GenAI's int8 IR agrees with it token for token.
    expect(JSON.parse(by.get('gpt2_int8/openvino-genai')!.generation!).gate).toMatchObject({ reference_engine: 'onnxruntime', passed: true });
    // OpenVINO runs the int8 IR as exported: its u8 weights read back, judged by top-k agreement.
    const int8Openvino = by.get('gpt2_int8/openvino')!;
    expect(int8Openvino.status, int8Openvino.error ?? '').toBe('ok');
    expect(JSON.parse(int8Openvino.precision!)).toMatchObject({ weights: 'int8' });
    expect(JSON.parse(int8Openvino.generation!).gate).toMatchObject({ reference_engine: 'onnxruntime', passed: true, rule: 'top_k' });
    for (const engine of ['onnxruntime', 'openvino']) expect(by.get(`stateless/${engine}`)?.status, by.get(`stateless/${engine}`)?.error ?? '').toBe('ok');
    expect(JSON.parse(by.get('stateless/openvino')!.facts!).ran).toMatch(/the IR \(stateless: the cache as inputs and outputs\)/);
    expect(by.get('stateless/openvino-genai')!.error).toMatch(/holds a stateless IR .*--disable-stateful.*Export it again without --disable-stateful, or run this one on onnxruntime or openvino/);
    expect(by.get('mismatched/onnxruntime')).toMatchObject({ status: 'failed' });
    expect(by.get('mismatched/onnxruntime')!.error).toMatch(/rebuilt from openvino_model\.xml's weights gives other logits than the IR \(\S+ apart .*6 parameters absent from openvino_model\.xml \(model\.layers\.0\.self_attn\.q_proj\.bias.*name the Hugging Face folder it was exported from/);
  }, 600_000);

  it('gates a bf16 engine by top-k agreement, and takes ShareGPT conversations and seeded random prompts', async () => {
    const dir = await tempDir('pbh-llm-prompts-');
    const sharegpt = path.join(dir, 'sharegpt.json');
    const conversations = ['How does a for statement work?', 'What is a module?', 'Explain exceptions.'].map((q) => ({ conversations: [{ from: 'human', value: q }, { from: 'gpt', value: 'An answer.' }] }));
    await writeFile(sharegpt, JSON.stringify(conversations));
    const engines = [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }];
    // Below fp32 the gate ranks the reference's tokens in the engine's top k instead of asking for the same argmax.
    const bf16Db = path.join(dir, 'bf16.duckdb');
    const bf16Config = await writeConfig(dir, 'bf16.yaml', { ...llmConfig('llm-bf16', [hf('llama_gqa')], [{ name: 'transformers', precision: 'bf16', options: { threads: 1 } }]), generate: { max_new_tokens: MAX_NEW, gate_prompts: 2 } });
    const bf16Run = await pbh(['run', bf16Config, '--db', bf16Db]);
    const bf16 = (await llmRows(bf16Db))[0]!;
    expect(bf16.status, `${bf16.error}\n${bf16Run.stderr.slice(-2000)}`).toBe('ok');
    expect(JSON.parse(bf16.generation!).gate).toMatchObject({ rule: 'top_k', k: 5, passed: true });
    const shareDb = path.join(dir, 'share.duckdb');
    const shareConfig = await writeConfig(dir, 'share.yaml', { ...llmConfig('llm-sharegpt', [hf('llama_gqa')], engines, { dataset: { prompts: sharegpt, held_out: undefined } }), generate: { max_new_tokens: MAX_NEW, gate_prompts: 0 } });
    expect((await pbh(['run', shareConfig, '--db', shareDb])).code).toBe(0);
    const shared = JSON.parse((await llmRows(shareDb))[0]!.generation!);
    expect(shared).toMatchObject({ prompt_source: 'sharegpt', requests: 3, perplexity: null });
    const randomDb = path.join(dir, 'random.duckdb');
    const random = { kind: 'text', random: { input_len: 40, range_ratio: 0.25, num_prompts: 6, seed: 7 } };
    const randomConfig = await writeConfig(dir, 'random.yaml', { ...llmConfig('llm-random', [hf('llama_gqa')], engines), dataset: random, generate: { max_new_tokens: MAX_NEW, gate_prompts: 0 } });
    expect((await pbh(['run', randomConfig, '--db', randomDb])).code).toBe(0);
    const g = JSON.parse((await llmRows(randomDb))[0]!.generation!);
    expect(g).toMatchObject({ prompt_source: 'random', requests: 6 });
    expect(g.prompt_tokens.min).toBeGreaterThanOrEqual(30);
    expect(g.prompt_tokens.max).toBeLessThanOrEqual(50);
  }, 600_000);
});
