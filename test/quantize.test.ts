import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyzeModel, nmPatternHolds, readOnnxModel } from '../packages/core/src/model/index.js';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { suiteData, suiteModel } from './suite.js';

const DIGITS = { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy') };

let dir: string;
let out: string;

/** Integer weights of the file, by the dtype of DequantizeLinear/ConvInteger weight inputs, read with core's reader. */
async function integerWeightTypes(file: string): Promise<Set<string>> {
  const { model } = await readOnnxModel(file);
  const inits = new Map(model.graph.initializers.map((t) => [t.name, t]));
  const types = new Set<string>();
  for (const n of model.graph.nodes) {
    const w = n.opType === 'DequantizeLinear' ? inits.get(n.inputs[0] ?? '') : n.opType === 'ConvInteger' || n.opType === 'MatMulInteger' ? inits.get(n.inputs[1] ?? '') : undefined;
    if (w && w.dims.length >= 2) types.add(w.dtype);
  }
  return types;
}

beforeAll(async () => {
  dir = await tempDir('pbh-quantize-');
  out = path.join(dir, 'q');
  const r = await pbh(['quantize', suiteModel('digits_resnet'), '--out', out, '--method', 'static,dynamic,nncf', '--calibration', suiteData('digits_calibration_x.npy')]);
  if (r.code !== 0) throw new Error(`pbh quantize failed (${r.code}): ${r.stderr}`);
}, 300_000);

describe('pbh quantize', () => {
  it('writes one file per method with int8 weights and its facts in pbh.optimization, read back by pbh inspect', async () => {
    for (const method of ['static', 'dynamic', 'nncf']) {
      const file = path.join(out, `digits_resnet.${method}.int8.onnx`);
      expect(await integerWeightTypes(file), method).toEqual(new Set(['int8']));
      const a = await analyzeModel(file);
      expect(a.quantization).toBe('int8');
      expect(a.quantizationFacts).toMatchObject({ tool: 'pbh quantize', kind: 'quantization', method, weight_dtype: 'int8' });
      expect(a.quantizationFacts!.library.name).toBe(method === 'nncf' ? 'nncf' : 'onnxruntime.quantization');
      expect(a.quantizationFacts!.calibration?.samples ?? null).toBe(method === 'dynamic' ? null : 1024);
      expect(a.quantizationFacts!.source.file).toBe('digits_resnet.onnx');
      // Against its fp32 source on calibration samples, by onnxruntime: a usable model, not merely a written one.
      expect(a.quantizationFacts!.check!.agreement).toBeGreaterThan(0.9);
      // The source's own metadata (its family) travels with the quantized copy.
      expect(a.family).toBe('resnet');
    }
    const staticFacts = (await analyzeModel(path.join(out, 'digits_resnet.static.int8.onnx'))).quantizationFacts!;
    expect(staticFacts).toMatchObject({ scheme: 'static', format: 'qdq', activation_dtype: 'uint8', per_channel: true });
    const inspect = await pbh(['inspect', path.join(out, 'digits_resnet.static.int8.onnx')]);
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(inspect.stdout).toMatch(/Quantized by {2}pbh quantize: static \(onnxruntime\.quantization [\d.]+, quantize_static \(op types but Softmax\)\)/);
  });

  it('calibrates from a config, per-tensor when asked, and refuses bad flags naming them', async () => {
    const config = await writeConfig(dir, 'calibration.yaml', {
      name: 'calibration', dataset: DIGITS, models: [{ name: 'cnn', path: suiteModel('digits_cnn') }], engines: [{ name: 'onnxruntime' }], batch_sizes: [1],
    });
    const r = await pbh(['quantize', suiteModel('digits_cnn'), '--out', path.join(dir, 'pt'), '--granularity', 'per_tensor', '--calibration', config, '--calibration-samples', '64', '--name', 'cnn']);
    expect(r.code, r.stderr).toBe(0);
    const facts = (await analyzeModel(path.join(dir, 'pt', 'cnn.static.int8_pt.onnx'))).quantizationFacts!;
    expect(facts.per_channel).toBe(false);
    expect(facts.calibration?.samples).toBe(64);
    expect(facts.calibration?.source).toContain("models[] entry cnn's preprocessing");
    const bad = await pbh(['quantize', suiteModel('digits_cnn'), '--out', path.join(dir, 'bad'), '--method', 'int3']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--method');
    const uncalibrated = await pbh(['quantize', suiteModel('digits_cnn'), '--out', path.join(dir, 'bad'), '--method', 'static']);
    expect(uncalibrated.code).toBe(2);
    expect(uncalibrated.stderr).toContain('needs --calibration');
  });

  it('keeps a pruned model\'s zeros and pruning facts through static quantization (2:4 + INT8)', async () => {
    const pruned = path.join(dir, 'pruned');
    const p = await pbh(['prune', suiteModel('digits_cnn'), '--out', pruned, '--method', 'magnitude', '--nm', '2:4']);
    expect(p.code, p.stderr).toBe(0);
    const r = await pbh(['quantize', path.join(pruned, 'digits_cnn.magnitude.2of4.onnx'), '--out', pruned, '--calibration', suiteData('digits_calibration_x.npy'), '--name', 'cnn_2of4']);
    expect(r.code, r.stderr).toBe(0);
    const a = await analyzeModel(path.join(pruned, 'cnn_2of4.static.int8.onnx'));
    expect(a.quantizationFacts?.method).toBe('static');
    expect(a.optimization).toMatchObject({ method: 'magnitude', kind: 'n_m', n: 2, m: 4 });
    expect(nmPatternHolds(a.sparsity, 2, 4)).toBe(true);
  });

  it('runs as int8, and each engine says what it executed: ONNX Runtime from its kernels, OpenVINO from its ops, TVM refuses', async () => {
    const db = path.join(dir, 'run.duckdb');
    const config = await writeConfig(dir, 'run.yaml', {
      name: 'quantized', dataset: { ...DIGITS, limit: 64 },
      models: [
        { name: 'cnn', path: suiteModel('digits_resnet'), weights: 'trained' },
        { name: 'cnn_static', path: path.join(out, 'digits_resnet.static.int8.onnx'), weights: 'trained' },
        { name: 'cnn_dynamic', path: path.join(out, 'digits_resnet.dynamic.int8.onnx'), weights: 'trained' },
      ],
      engines: [
        { name: 'onnxruntime', options: { intraOpNumThreads: 1 } },
        { name: 'onnxruntime', label: 'ort-harness', process: 'harness', options: { intraOpNumThreads: 1 } },
        { name: 'openvino', options: { threads: 1 } },
        { name: 'tvm' },
        { name: 'onnxruntime', label: 'ort-int8', precision: 'int8', options: { intraOpNumThreads: 1 } },
      ],
      exclude: [{ model: 'cnn', engine: 'tvm' }, { model: 'cnn_static', engine: 'ort-int8' }, { model: 'cnn_dynamic', engine: 'ort-int8' }],
      batch_sizes: [8], warmup_batches: 1, sessions: 1, scorers: ['top1'],
      scenario: { kind: 'single_stream', min_query_count: 4, min_duration_ms: 20 },
    });
    const run = await pbh(['run', config, '--db', db]);
    expect([0, 1]).toContain(run.code);
    const rows = await queryJson<{ model: string; engine: string; status: string; requested: string | null; executed: string | null; evidence: string | null; error: string | null; json: string }>(db,
      "SELECT model_name AS model, coalesce(engine_label, engine_name) AS engine, status, precision_requested AS requested, precision_executed AS executed, precision_evidence AS evidence, error, profile_json AS json FROM profiles");
    const cell = (model: string, engine: string) => rows.find((r) => r.model === model && r.engine === engine)!;
    for (const engine of ['onnxruntime', 'ort-harness']) {
      const s = cell('cnn_static', engine);
      expect(s.status, s.error ?? '').toBe('ok');
      expect([s.requested, s.executed]).toEqual(['int8', 'int8']);
      expect(s.evidence).toMatch(/optimized graph.*int8 kernels .*QLinearConv/);
      expect(cell('cnn_dynamic', engine).evidence).toMatch(/int8 kernels .*ConvInteger/);
      expect(cell('cnn', engine).executed).toBe('fp32');
    }
    const ov = cell('cnn_static', 'openvino');
    expect(ov.status, ov.error ?? '').toBe('ok');
    expect(ov.executed).toBe('int8');
    expect(ov.evidence).toMatch(/runtime precisions of \d+ compute ops: [ui]8 x\d+/);
    // OpenVINO decomposes ONNX Runtime's ConvInteger into f32 convolutions: an int8 request that ran fp32 says so.
    expect([cell('cnn_dynamic', 'openvino').requested, cell('cnn_dynamic', 'openvino').executed]).toEqual(['int8', 'fp32']);
    expect(cell('cnn_static', 'tvm').status).toBe('failed');
    expect(cell('cnn_static', 'tvm').error).toMatch(/TVM cannot execute .* in int8: its Relax ONNX importer/);
    // int8 asked of ONNX Runtime on an fp32 graph is refused before anything runs.
    expect(cell('cnn', 'ort-int8').status).toBe('failed');
    expect(cell('cnn', 'ort-int8').error).toMatch(/onnxruntime cannot execute int8/);
    // % of peak is against the executed precision's peak, which names its unit and clock.
    for (const r of rows.filter((x) => x.status === 'ok')) {
      const profile = JSON.parse(r.json) as { peak: { precision: string; ops_per_s: number; formula: string } | null; achieved_flops: number | null; peak_fraction: number | null };
      expect(profile.peak?.precision, `${r.model} on ${r.engine}`).toBe(r.executed);
      expect(profile.peak_fraction).toBeCloseTo(profile.achieved_flops! / profile.peak!.ops_per_s, 12);
      expect(profile.peak!.formula).toMatch(/GHz \(.*clock.*\)/);
    }
    const recorded = await queryJson<{ quantized: string }>(db, "SELECT json_extract_string(profile_json, '$.model.quantized.method') AS quantized FROM profiles WHERE model_name = 'cnn_static' AND status = 'ok' LIMIT 1");
    expect(recorded[0]!.quantized).toBe('static');
  });
});
