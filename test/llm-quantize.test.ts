import { access } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyzeModel } from '../packages/core/src/model/index.js';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { buildLlms } from './llms.js';
import { LLMS } from './suite.js';

interface Row {
  model: string;
  engine: string;
  status: string;
  error: string | null;
  precision: string;
  generation: string;
  energy: string;
}

const VARIANTS = [
  { method: 'int4', file: 'llama.int4.int4.onnx', weights: 'int4', stored: 'int4', block: 32 },
  { method: 'nncf-int8', file: 'llama.nncf-int8.int8.onnx', weights: 'int8', stored: 'uint8', block: null },
  { method: 'nncf-int4', file: 'llama.nncf-int4.int4.onnx', weights: 'int4', stored: 'int4', block: 32 },
];

describe('pbh quantize on a language model (weight-only compression of an Optimum decoder)', () => {
  beforeAll(buildLlms, 600_000);

  it('writes int4 and int8 weight variants beside the tokenizer; ONNX Runtime and OpenVINO run them and read the weights back', async () => {
    const dir = await tempDir('pbh-llm-quantize-');
    const source = path.join(LLMS, 'llama_gqa', 'onnx', 'model.onnx');
    const out = path.join(dir, 'q');
    const q = await pbh(['quantize', source, '--out', out, '--method', VARIANTS.map((v) => v.method).join(','), '--name', 'llama']);
    expect(q.code, q.stderr).toBe(0);
    await access(path.join(out, 'tokenizer.json'));
    for (const v of VARIANTS) {
      const a = await analyzeModel(path.join(out, v.file));
      expect(a.quantizationFacts, v.method).toMatchObject({ method: v.method, scheme: 'weight_only', weight_dtype: v.stored, activation_dtype: null, calibration: null, block_size: v.block });
      expect(a.quantizationDetail?.style).toBe('weight_only');
    }
    // Static quantization needs activation scales a decoder's cache does not give: refused, naming the weight-only methods.
    const refused = await pbh(['quantize', source, '--out', path.join(dir, 'static'), '--method', 'dynamic']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/language model decoder .*--method int4,nncf-int8,nncf-int4/);

    const db = path.join(dir, 'q.duckdb');
    const config = await writeConfig(dir, 'q.yaml', {
      name: 'llm-quantize',
      dataset: { kind: 'text', prompts: path.join(LLMS, 'data', 'prompts.jsonl'), held_out: path.join(LLMS, 'data', 'held_out.txt'), limit: 4 },
      models: [{ name: 'llama', path: source }, ...VARIANTS.map((v) => ({ name: `llama_${v.method}`, path: path.join(out, v.file) }))],
      generate: { max_new_tokens: 8, gate_prompts: 2 },
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }, { name: 'openvino', options: { threads: 1 } }],
      batch_sizes: [1],
      warmup_batches: 1,
      sessions: 1,
      rounds: { max_sessions: 1 },
    });
    // --tdp-w: where no energy counter reads (no RAPL here), energy is the TDP estimate, labelled as one.
    const r = await pbh(['run', config, '--db', db, '--tdp-w', '100'], { timeoutMs: 600_000 });
    expect(r.code, r.stderr).toBe(0);
    const rows = await queryJson<Row>(
      db,
      "SELECT model_name AS model, engine_name AS engine, status, error, json_extract(profile_json, '$.engine.precision')::VARCHAR AS precision, json_extract(profile_json, '$.generation')::VARCHAR AS generation, json_extract(profile_json, '$.energy')::VARCHAR AS energy FROM profiles",
    );
    expect(rows).toHaveLength(8);
    // Energy per output token: the sessions' joules over their output tokens (one session of 4 requests here).
    for (const row of rows) {
      const g = JSON.parse(row.generation);
      const e = JSON.parse(row.energy);
      if (e.joules_per_sample === null) expect(g.joules_per_output_token).toBeNull();
      else expect(g.joules_per_output_token).toBeCloseTo((e.joules_per_sample * 4) / g.output_tokens, 12);
    }
    expect(rows.some((row) => JSON.parse(row.generation).joules_per_output_token > 0)).toBe(true);
    const nll = (model: string, engine: string) => JSON.parse(rows.find((x) => x.model === model && x.engine === engine)!.generation).perplexity.nll_nats as number;
    for (const v of VARIANTS) {
      for (const engine of ['onnxruntime', 'openvino']) {
        const row = rows.find((x) => x.model === `llama_${v.method}` && x.engine === engine)!;
        expect(row.status, row.error ?? '').toBe('ok');
        const precision = JSON.parse(row.precision);
        expect(precision.weights, `${v.method} on ${engine}`).toBe(v.weights);
        expect(precision.evidence).toMatch(/weight-only compression read from the graph/);
        // onnxruntime's MatMulNBits without accuracy_level 4 dequantizes and computes in fp32; OpenVINO may quantize
        // the activations of compressed layers at run time (its dynamic quantization), which it says.
        if (engine === 'onnxruntime') expect(precision.executed).toBe('fp32');
        else expect(precision.evidence).toMatch(/DYNAMIC_QUANTIZATION_GROUP_SIZE=\d+/);
        const g = JSON.parse(row.generation);
        if (engine === 'openvino') expect(g.gate, `${v.method} on openvino`).toMatchObject({ reference_engine: 'onnxruntime', rule: 'top_k', passed: true });
        // Compressed weights cost the tiny model little: its held-out perplexity moves by under a tenth.
        expect(Math.abs(nll(`llama_${v.method}`, engine) / nll('llama', engine) - 1), `${v.method} on ${engine}`).toBeLessThan(0.1);
      }
    }
  }, 900_000);
});
