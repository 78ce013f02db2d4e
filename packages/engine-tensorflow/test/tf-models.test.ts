import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from '../../../test/helpers.js';
import { ROOT } from '../../../test/suite.js';

/**
 * A Keras CNN as TensorFlow users keep it (.keras, and its SavedModel) and a two-input, two-output Keras model, built
 * by python/generate_tf_models.py: run natively by the tensorflow engine (plain and XLA) and, converted once by
 * tf2onnx, by onnxruntime and openvino, behind one correctness gate.
 */
const MODELS = path.join(ROOT, '.cache', 'tf-models');
const ENGINES = ['onnxruntime', 'openvino', 'tensorflow', 'tensorflow-xla'];

interface Row {
  model_name: string;
  engine_name: string;
  engine_label: string | null;
  status: string;
  error: string | null;
  profile_json: string;
}
interface Profile {
  model: { framework: string; path: string; parameters: number; flops_per_sample: number | null; inputs: { name: string; dtype: string; shape: unknown[] }[]; outputs: { name: string }[]; source: Record<string, unknown> };
  engine: { facts: Record<string, unknown>; precision: { executed: string; evidence: string } };
  layers?: { name: string; op_type: string; mean_ns: number }[] | null;
}

let dir: string;
let rows: Row[] = [];
let said = '';

beforeAll(async () => {
  execFileSync(path.join(ROOT, '.venv', 'bin', 'python'), [path.join(ROOT, 'python', 'generate_tf_models.py')], { stdio: 'ignore' });
  dir = await tempDir('pbh-tf-models-');
  const config = await writeConfig(dir, 'tf.yaml', {
    name: 'tf-models',
    dataset: { kind: 'npy', inputs: { pixels: path.join(MODELS, 'data', 'digits_nhwc_x.npy'), extra: path.join(MODELS, 'data', 'extra_x.npy') }, labels: path.join(MODELS, 'data', 'digits_y.npy') },
    models: [
      { name: 'cnn_keras', path: path.join(MODELS, 'models', 'digits_cnn.keras') },
      { name: 'cnn_savedmodel', path: path.join(MODELS, 'models', 'digits_cnn_savedmodel') },
      { name: 'two_heads', path: path.join(MODELS, 'models', 'two_heads.keras') },
    ],
    engines: [
      { name: 'onnxruntime', options: { intraOpNumThreads: 1 } },
      { name: 'openvino', options: { threads: 1 } },
      { name: 'tensorflow', options: { threads: 1 } },
      { name: 'tensorflow', label: 'tensorflow-xla', options: { threads: 1, jitCompile: true } },
    ],
    batch_sizes: [4],
    warmup_batches: 1,
    sessions: 1,
    scenario: { kind: 'single_stream', min_query_count: 10, min_duration_ms: 0 },
    layer_profile: { enabled: true, iterations: 2 },
    reference_engine: 'tensorflow',
    timeout_s: 300,
  });
  const db = path.join(dir, 'tf.duckdb');
  const run = await pbh(['run', config, '--db', db], { timeoutMs: 15 * 60_000, env: { PBH_CONVERT_CACHE: path.join(dir, 'cache') } });
  said = run.stderr;
  rows = await queryJson<Row>(db, 'SELECT model_name, engine_name, engine_label, status, error, profile_json::VARCHAR AS profile_json FROM profiles ORDER BY model_name, engine_name, engine_label');
}, 20 * 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const profile = (model: string, engine: string): Profile => {
  const r = rows.find((x) => x.model_name === model && (x.engine_label ?? x.engine_name) === engine);
  if (!r) throw new Error(`no Profile for ${model} on ${engine}; pbh run said:\n${said.slice(-3000)}`);
  expect(r.error, `${model} on ${engine}`).toBeNull();
  expect(r.status).toBe('ok');
  return JSON.parse(r.profile_json) as Profile;
};

describe('TensorFlow-born models on one leaderboard', () => {
  it.each(['cnn_keras', 'cnn_savedmodel', 'two_heads'])('%s runs on every engine and passes the gate against TensorFlow', (model) => {
    for (const engine of ENGINES) profile(model, engine);
  });

  it('records the tf2onnx conversion, cached once per model, and analyses the converted graph', () => {
    for (const model of ['cnn_keras', 'cnn_savedmodel']) {
      const ort = profile(model, 'onnxruntime');
      expect(ort.model.framework).toBe('tensorflow');
      expect(ort.model.source).toMatchObject({ format: model === 'cnn_keras' ? 'keras' : 'savedmodel', exporter: 'tf2onnx (from_function)', exporter_version: 'tf2onnx 1.17.0, tensorflow 2.21.0, opset 17', framework_version: '2.21.0' });
      expect(ort.model.path).toBe(ort.model.source.onnx_path);
      expect(profile(model, 'tensorflow').model.source.onnx_path).toBe(ort.model.source.onnx_path);
      // conv1 3x3x1x16 + 16, conv2 3x3x16x32 + 32, logits (4x4x32)x10 + 10: the Keras model's own count.
      expect(ort.model.parameters).toBe(3 * 3 * 16 + 16 + 3 * 3 * 16 * 32 + 32 + 512 * 10 + 10);
      expect(ort.model.flops_per_sample).toBeGreaterThan(0);
      // NHWC, as the Keras model takes images.
      expect(ort.model.inputs).toEqual([{ name: 'pixels', dtype: 'float32', shape: expect.arrayContaining([8, 8, 1]) }]);
    }
  });

  it('binds two named inputs and reads two named outputs on every engine', () => {
    for (const engine of ENGINES) {
      const p = profile('two_heads', engine);
      expect(p.model.inputs.map((i) => i.name).sort()).toEqual(['extra', 'pixels']);
      expect(p.model.outputs.map((o) => o.name).sort()).toEqual(['embedding', 'logits']);
    }
  });

  it('runs the source natively, XLA on request, reads fp32 back from the traced graph and times its kernels', () => {
    const plain = profile('cnn_savedmodel', 'tensorflow');
    expect(plain.engine.facts).toMatchObject({ source_format: 'savedmodel', jit_compile: false, intra_op_threads: 1 });
    expect(profile('cnn_keras', 'tensorflow-xla').engine.facts).toMatchObject({ source_format: 'keras', jit_compile: true });
    expect(plain.engine.precision).toMatchObject({ executed: 'fp32', evidence: expect.stringMatching(/compute ops \(convolutions, matmuls\) are \d+ float32/) });
    const layers = plain.layers ?? [];
    // The kernels TensorFlow's executor ran (grappler fuses bias and relu into the convolution and the matmul).
    expect(layers.some((l) => /Conv2D/.test(l.op_type))).toBe(true);
    expect(layers.some((l) => /MatMul/.test(l.op_type))).toBe(true);
    expect(layers.every((l) => l.mean_ns >= 0)).toBe(true);
  });
});
