import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findVenvPython } from '../packages/core/src/worker/venv.js';
import { freePort, pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { buildLlms, hf, llmConfig, llmRows } from './llms.js';
import { LLMS, ROOT } from './suite.js';

const MAX_NEW = 8;
const PROMPTS = 4;
const SERVE_PROMPTS = 16;


// llama-cpp-python is a source build of minutes; npm test's setup installs it (pbh doctor --fix --engine llama-cpp).
const venv = findVenvPython();
const installed = venv ? (await execa(venv.python, ['-c', 'import llama_cpp, llama_cpp_converter'], { reject: false })).exitCode === 0 : false;

describe('llama.cpp (llama-cpp-python) on the project\'s LLMs: in process and behind its OpenAI-compatible server', () => {
  const servers: ResultPromise[] = [];

  beforeAll(async () => {
    expect(installed, 'llama-cpp-python and llama.cpp\'s converter in the venv: npx pbh doctor --fix --engine llama-cpp').toBe(true);
    await buildLlms();
  }, 600_000);

  afterAll(() => {
    for (const s of servers) s.kill();
  });

  it('converts Hugging Face folders to GGUF once; passes the greedy gate token for token at fp32 and by top-k ranks at fp16 and Q8_0, GPT-2 included', async () => {
    const dir = await tempDir('pbh-llamacpp-');
    const db = path.join(dir, 'llamacpp.duckdb');
    const engines = [
      { name: 'onnxruntime', options: { intraOpNumThreads: 1 } },
      { name: 'llama-cpp', options: { threads: 1 } },
      { name: 'llama-cpp', label: 'llama-cpp-f16', precision: 'fp16', options: { threads: 1 } },
      { name: 'llama-cpp', label: 'llama-cpp-q8', options: { threads: 1, quant: 'Q8_0' } },
    ];
    const config = await writeConfig(dir, 'llamacpp.yaml', llmConfig('llamacpp-test', ['llama_gqa', 'qwen2', 'phi3', 'gpt2'].map(hf), engines));
    const r = await pbh(['run', config, '--db', db], { timeoutMs: 600_000 });
    expect(r.code, r.stderr).toBe(0);
    const by = new Map((await llmRows(db)).map((x) => [`${x.model}/${x.engine}`, x]));
    // GPT-2 through the two adaptations of llama.cpp's converter (hf_to_gguf.py: n_ctx from n_positions, n_inner).
    for (const [model, engine] of ['llama_gqa', 'qwen2', 'phi3', 'gpt2'].flatMap((m) => [[m, 'llama-cpp'], [m, 'llama-cpp-f16']] as const)) {
      const row = by.get(`${model}/${engine}`)!;
      expect(row.status, row.error ?? '').toBe('ok');
      const g = JSON.parse(row.generation!);
      const fp16 = engine === 'llama-cpp-f16';
      // At fp16 the gate ranks the reference's tokens among llama.cpp's logits (capability decoder) instead.
      expect(g.gate, `${model} on ${engine}`).toMatchObject({ reference_engine: 'onnxruntime', passed: true, rule: fp16 ? 'top_k' : 'exact' });
      expect(g.served).toBe('one_at_a_time');
      expect(g.output_tokens).toBe(PROMPTS * MAX_NEW);
      // llama.cpp's logits score the held-out text as ONNX Runtime's do (fp16 weights and activations move it a little).
      const reference = JSON.parse(by.get(`${model}/onnxruntime`)!.generation!).perplexity.nll_nats;
      expect(Math.abs(g.perplexity.nll_nats - reference), `${model} on ${engine}`).toBeLessThan(fp16 ? 1e-2 : 1e-3);
      // llama.cpp's own counters beside PBH's: the prompt's tokens as it evaluated them, one eval per token after the first.
      expect(Object.keys(g.runtime_reported).sort()).toEqual(['eval_ms_per_token', 'eval_tokens', 'prompt_eval_ms', 'prompt_eval_tokens']);
      expect(g.runtime_reported.eval_tokens).toBe(MAX_NEW - 1);
      expect(g.runtime_reported.eval_ms_per_token).toBeGreaterThan(0);
      expect(JSON.parse(row.precision!)).toMatchObject({ executed: fp16 ? 'fp16' : 'fp32' });
      const facts = JSON.parse(row.facts!);
      const outtype = fp16 ? 'f16' : 'f32';
      expect(facts.gguf).toMatch(new RegExp(`model-llama-cpp-0\\.3\\.36-${outtype}\\.gguf$`));
      expect(facts.converter).toMatch(new RegExp(`convert_hf_to_gguf\\.py from the llama-cpp-python 0\\.3\\.36 sdist \\(--outtype ${outtype}`));
    }
    // llama.cpp's quantizer makes Q8_0 of the f32 GGUF; the weights are read back from its tensor types, and the
    // gate ranks the reference's tokens among llama.cpp's logits.
    for (const model of ['llama_gqa', 'qwen2', 'phi3', 'gpt2']) {
      const row = by.get(`${model}/llama-cpp-q8`)!;
      expect(row.status, row.error ?? '').toBe('ok');
      const g = JSON.parse(row.generation!);
      expect(g.gate, model).toMatchObject({ passed: true, rule: 'top_k' });
      expect(JSON.parse(row.precision!)).toMatchObject({ requested: 'fp32', executed: 'int8', weights: 'int8', evidence: expect.stringMatching(/GGUF tensor types: .*Q8_0/) });
      expect(JSON.parse(row.facts!).quantizer).toMatch(/llama_model_quantize Q8_0 .* of model-llama-cpp-0\.3\.36-f32\.gguf/);
    }
  }, 620_000);

  it('takes GGUF files as models[].path: the other engines run their transformers export, llama-cpp the file, tokens from its own vocabulary', async () => {
    const dir = await tempDir('pbh-llamacpp-gguf-');
    const files: Record<string, string> = {};
    for (const outtype of ['f32', 'q8_0']) {
      files[outtype] = path.join(dir, `llama_gqa-${outtype}.gguf`);
      const converted = await execa(venv!.python, [path.join(ROOT, 'packages', 'engine-llamacpp', 'python', 'hf_to_gguf.py'), '--outtype', outtype, '--outfile', files[outtype]!, path.join(LLMS, 'llama_gqa', 'hf')], { reject: false });
      expect(converted.exitCode, converted.stderr).toBe(0);
    }
    const junk = path.join(dir, 'junk.gguf');
    await writeFile(junk, 'not a model');
    const db = path.join(dir, 'gguf.duckdb');
    const models = [{ name: 'gguf_f32', path: files.f32 }, { name: 'gguf_q8', path: files.q8_0 }, { name: 'junk', path: junk }];
    const config = await writeConfig(dir, 'gguf.yaml', llmConfig('llamacpp-gguf', models, [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }, { name: 'llama-cpp', options: { threads: 1 } }]));
    const r = await pbh(['run', config, '--db', db], { timeoutMs: 600_000 });
    expect(r.code).toBe(1);
    const all = await llmRows(db);
    const by = new Map(all.map((x) => [`${x.model}/${x.engine}`, x]));
    for (const [model, rule] of [['gguf_f32', 'exact'], ['gguf_q8', 'top_k']] as const) {
      for (const engine of ['onnxruntime', 'llama-cpp']) expect(by.get(`${model}/${engine}`)?.status, by.get(`${model}/${engine}`)?.error ?? '').toBe('ok');
      const g = JSON.parse(by.get(`${model}/llama-cpp`)!.generation!);
      expect(g.gate, model).toMatchObject({ reference_engine: 'onnxruntime', passed: true, rule });
      // The tokenizer.json beside the export is built from the GGUF's vocabulary (checked against llama.cpp's own tokenization).
      expect(g.tokenizer).toMatchObject({ kind: 'tokenizer.json', vocab_size: 512 });
      expect(JSON.parse(by.get(`${model}/llama-cpp`)!.facts!)).toMatchObject({ converted: false, source: files[model === 'gguf_f32' ? 'f32' : 'q8_0'] });
    }
    const source = JSON.parse((await queryJson<{ s: string }>(db, "SELECT json_extract(profile_json, '$.model.source')::VARCHAR AS s FROM profiles WHERE model_name = 'gguf_q8' LIMIT 1"))[0]!.s);
    expect(source).toMatchObject({ path: files.q8_0, format: 'gguf' });
    expect(source.exporter).toMatch(/transformers from_pretrained\(gguf_file=\) \(LlamaForCausalLM; tokenizer\.json: tokenizers BPE from the GGUF's tokens and merges\), then optimum-onnx main_export/);
    expect(all.find((x) => x.model === 'junk')!.error).toMatch(/junk\.gguf: does not start with the GGUF magic/);
  }, 620_000);

  it('serves a GGUF with python -m llama_cpp.server: the openai engine at a Poisson rate and to its capacity, every point kept', async () => {
    const dir = await tempDir('pbh-llamacpp-serve-');
    const gguf = path.join(dir, 'llama_gqa-f32.gguf');
    const converted = await execa(venv!.python, [path.join(ROOT, 'packages', 'engine-llamacpp', 'python', 'hf_to_gguf.py'), '--outtype', 'f32', '--outfile', gguf, path.join(LLMS, 'llama_gqa', 'hf')], { reject: false });
    expect(converted.exitCode, converted.stderr).toBe(0);
    const port = await freePort();
    // One Llama behind a lock: requests are served one at a time (no parallel slots in llama-cpp-python's server), and
    // by default a request that waits cuts the streaming one short, which a load test must not have.
    const proc = execa(venv!.python, ['-m', 'llama_cpp.server', '--model', gguf, '--host', '127.0.0.1', '--port', String(port), '--n_ctx', '512', '--n_threads', '1', '--n_threads_batch', '1', '--seed', '0', '--interrupt_requests', 'False'], { cwd: ROOT, reject: false, all: true, buffer: false });
    servers.push(proc);
    let said = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`llama_cpp.server did not start: ${said.slice(-2000)}`)), 120_000);
      proc.all!.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (/Uvicorn running|Application startup complete/.test(said)) {
          clearTimeout(timer);
          resolve();
        }
      });
      void proc.then(() => reject(new Error(`llama_cpp.server exited: ${said.slice(-2000)}`)));
    });
    const db = path.join(dir, 'serve.duckdb');
    // The model is named for its alias (the GGUF path); completions: the prompt as is, counted with the folder's tokenizer.
    const options = { base_url: `http://127.0.0.1:${port}/v1`, model: gguf, late_ms: 1000 };
    const file = await writeConfig(
      dir,
      'serve.yaml',
      llmConfig(
        'llamacpp-serve',
        [hf('llama_gqa')],
        [
          { name: 'openai', label: 'llamacpp-poisson', options, scenario: { kind: 'server', target_qps: 4 } },
          { name: 'openai', label: 'llamacpp-capacity', options, scenario: { kind: 'server', target_qps: 4, find_peak: true } },
        ],
        // SLOs a one-request-at-a-time server meets at low rates only, so the search brackets a capacity (or finds none).
        { generate: { max_concurrency: 4, slo: { ttft_ms: 50, itl_ms: 20 }, gate_prompts: 0, perplexity: false }, prompts: SERVE_PROMPTS },
      ),
    );
    const r = await pbh(['run', file, '--db', db], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const by = new Map((await llmRows(db)).map((x) => [x.engine, x]));
    for (const engine of ['llamacpp-poisson', 'llamacpp-capacity']) {
      const row = by.get(engine)!;
      expect(row, engine).toMatchObject({ status: 'ok' });
      const g = JSON.parse(row.generation!);
      expect(g.served).toBe('server');
      expect(g.token_count).toBe('tokenizer');
      expect(g.requests).toBe(SERVE_PROMPTS);
      expect(g.per_request.every((q: { output_tokens: number }) => q.output_tokens >= 1)).toBe(true);
      expect(g.output_tokens_per_s).toBeGreaterThan(0);
    }
    const capacity = by.get('llamacpp-capacity')!;
    const points: { target_qps: number; validity: string; reasons: string[] }[] = JSON.parse(capacity.scenario!).peak_search;
    const found = JSON.parse(capacity.generation!).capacity;
    expect(points.length).toBeGreaterThanOrEqual(2);
    expect(found.points).toBe(points.length);
    const valid = points.filter((p) => p.validity === 'VALID').map((p) => p.target_qps);
    expect(found.rate_rps).toBe(valid.length ? Math.max(...valid) : null);
    for (const p of points) expect(p.reasons.length === 0).toBe(p.validity === 'VALID');
  }, 400_000);
});
