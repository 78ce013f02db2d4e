import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { ROOT } from './suite.js';

/**
 * The forms ONNX files come in, on every engine through `pbh run`: recurrent state with its batch on axis 1 and a
 * scalar that decides an If (fed as zeros and a constant), float16 inputs and outputs, weights in a side file, and
 * opsets from 7 to 26, the newest ONNX Runtime 1.30 loads (27 it refuses; OpenVINO and TVM import both).
 */
const ENGINES = ['onnxruntime', 'openvino', 'tvm'] as const;
const OPSETS = [7, 13, 26];
const N = 8;
const models = ['state_if', 'fp16_mlp', 'external_mlp', ...OPSETS.map((o) => `mlp_opset${o}`)];

interface Row {
  model_name: string;
  engine_name: string;
  batch_size: number;
  status: string;
  error: string | null;
  achieved_flops: number | null;
  profile_json: string;
}

let dir = '';
let rows: Row[] = [];
let stderr = '';

beforeAll(async () => {
  dir = await tempDir('pbh-formats-');
  const python = path.join(ROOT, '.venv', 'bin', 'python');
  execFileSync(python, [path.join(ROOT, 'test', 'fixtures', 'make_formats.py'), dir, ...OPSETS.map(String)]);
  const spec = {
    x4: { samples: N, dtype: 'float32', shape: [4], low: -1, high: 1 },
    x16: { samples: N, dtype: 'float32', shape: [16], low: -1, high: 1 },
    h16: { samples: N, dtype: 'float16', shape: [16], low: -1, high: 1 },
  };
  execFileSync(python, [path.join(ROOT, 'test', 'fixtures', 'wild_data.py'), dir, JSON.stringify(spec)]);
  const config = await writeConfig(dir, 'formats.yaml', {
    name: 'model-formats',
    dataset: { kind: 'npy', inputs: { x4: 'x4.npy', x16: 'x16.npy', h16: 'h16.npy' } },
    models: [
      { name: 'state_if', path: 'state_if.onnx', inputs: { x: 'x4', state: { zeros: true }, sr: { constant: 16000, dtype: 'int64' } } },
      { name: 'fp16_mlp', path: 'fp16_mlp.onnx', inputs: { x: 'h16' } },
      { name: 'external_mlp', path: 'external_mlp.onnx', inputs: { x: 'x16' } },
      ...OPSETS.map((o) => ({ name: `mlp_opset${o}`, path: `mlp_opset${o}.onnx`, inputs: { x: 'x16' } })),
    ],
    engines: ENGINES.map((name) => (name === 'tvm' ? { name, options: { cacheDir: path.join(dir, 'tvm-cache') } } : { name })),
    // Batch 3 over 8 samples leaves a last batch of 2: padded on each input's own batch axis where the engine compiled 3.
    batch_sizes: [1, 3, 4],
    exclude: models.filter((m) => m !== 'state_if').map((model) => ({ model, batch_size: 3 })),
    warmup_batches: 1,
    sessions: 1,
    scenario: { kind: 'single_stream', min_query_count: 4, min_duration_ms: 0 },
    layer_profile: { enabled: false },
  });
  const db = path.join(dir, 'formats.duckdb');
  stderr = (await pbh(['run', config, '--db', db], { timeoutMs: 20 * 60_000 })).stderr;
  rows = await queryJson<Row>(db, 'SELECT model_name, engine_name, batch_size, status, error, achieved_flops, profile_json::VARCHAR AS profile_json FROM profiles ORDER BY model_name, engine_name, batch_size');
}, 25 * 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The parts of a stored Profile these tests read. */
interface Stored {
  model: { counted_at?: Record<string, number[]>; flops_per_sample: number | null; flops_note?: string | null; opset: number | null };
  correctness: { passed: boolean; tolerance_rule: string; max_abs_error: number };
  workload: { last_batch: string | null; samples_scored: number };
  engine: { precision: { executed: string } };
}

const profile = (model: string, engine: string, batch = 4): { row: Row; json: Stored } => {
  const row = rows.find((r) => r.model_name === model && r.engine_name === engine && r.batch_size === batch);
  if (!row) throw new Error(`no Profile for ${model} on ${engine}; pbh run said:\n${stderr.slice(-3000)}`);
  return { row, json: JSON.parse(row.profile_json) as Stored };
};

describe('ONNX files as users bring them, on every engine', () => {
  it.each(models.flatMap((m) => ENGINES.map((e) => [m, e] as const)))('%s runs on %s at batch 4', (model, engine) => {
    const { row } = profile(model, engine);
    expect(row.error, `${model} on ${engine}`).toBeNull();
    expect(row.status).toBe('ok');
    expect(row.achieved_flops).toBeGreaterThan(0);
  });

  it('feeds the state as zeros [2, 4, 3] on its batch axis and the sample rate as a scalar, and counts the If branch it takes', () => {
    const { json } = profile('state_if', 'openvino');
    expect(json.model.counted_at).toEqual({ x: [4, 4], state: [2, 4, 3], sr: [] });
    // At batch 4: the then-branch's 2x + x is 2 FLOPs per element of x [4, 4], stateN = state + 1 one per element of
    // [2, 4, 3], the Equal on the scalar one per query; divided by the batch.
    expect(json.model.flops_per_sample).toBe((2 * 4 * 4 + 2 * 4 * 3 + 1) / 4);
    expect(json.model.flops_note).toMatch(/counted the then branch, the one its condition takes/);
  });

  it.each(ENGINES.map((e) => [e] as const))('pads a short last batch of state_if on %s along each input\'s own batch axis', (engine) => {
    const { row, json } = profile('state_if', engine, 3);
    expect(row.error, `state_if b3 on ${engine}`).toBeNull();
    expect(json.workload.samples_scored).toBe(N);
    // OpenVINO and TVM compiled batch 3 and are padded; ONNX Runtime may run the 2 rows at their own size.
    if (engine === 'onnxruntime') expect(['dynamic', 'padded']).toContain(json.workload.last_batch);
    else expect(json.workload.last_batch).toBe('padded');
  });

  it('compares float16 outputs as values under the fp16 rule', () => {
    const { json } = profile('fp16_mlp', 'openvino');
    expect(json.correctness.passed).toBe(true);
    // The rule follows the coarser of the model's fp16 and what ran: OpenVINO's CPU plugin executes an fp16 model in
    // bf16 where the CPU has AVX-512 BF16 and no AVX-512 FP16, in fp16 or fp32 elsewhere.
    const coarser = json.engine.precision.executed === 'bf16' ? 'bf16' : 'fp16';
    expect(json.correctness.tolerance_rule).toMatch(new RegExp(`^reduced_precision: ${coarser} (executed|model)`));
    expect(json.correctness.max_abs_error).toBeLessThan(0.05);
  });

  it('names the opsets each file declares', () => {
    for (const o of OPSETS) expect(profile(`mlp_opset${o}`, 'tvm').json.model.opset).toBe(o);
  });
});
