import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import * as ort from 'onnxruntime-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findVenvPython, loadDataset, loadPlugin, type Engine, type PreparedModel, type Tensor } from '@pbh/core';
import { suiteData, suiteModel } from '../../../test/suite.js';
import { expectMixedIoRoundTrip } from '../../../test/engine-contract.js';

const plugin = await loadPlugin('@pbh/engine-pytorch');
const byName = (name: string): Engine => plugin.engines!.find((e) => e.name === name)!;
const pytorchEngine = byName('pytorch');
const torchscriptEngine = byName('torchscript');
const torchCompileEngine = byName('torch-compile');
type Parse = (o: Record<string, unknown>) => Record<string, unknown>;
// Options as the harness passes them: parsed by the engine's schema (made from the manifest), defaults filled.
const parseFor =
  (engine: Engine): Parse =>
  (o) =>
    engine.optionsSchema.parse(o);
const ENGINES: [Engine, Parse][] = [pytorchEngine, torchscriptEngine, torchCompileEngine].map((e) => [e, parseFor(e)]);

let workDir: string;
let mlpPt: string;
let mlpPt2: string;
let hardmax: string;
let mixedIo: string;
const prepared: PreparedModel[] = [];

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-pytorch-'));
  const python = findVenvPython()!.python;
  [mlpPt, mlpPt2, hardmax] = (await execa(python, [path.join(import.meta.dirname, 'make_torch_models.py'), workDir])).stdout.trim().split('\n') as [string, string, string];
  [mixedIo] = (await execa(python, [path.join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'make_models.py'), workDir])).stdout.trim().split('\n') as [string];
});
afterEach(async () => {
  await Promise.all(prepared.splice(0).map((m) => m.dispose()));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function prepare(engine: Engine, parse: Parse, modelPath: string, input: { name: string; shape: number[] }, options: Record<string, unknown> = {}, precision: 'fp32' | 'bf16' = 'fp32') {
  const model = await engine.prepare({
    model: { name: path.basename(modelPath), path: modelPath, workDir },
    batchSize: input.shape[0]!,
    device: 'cpu',
    options: parse({ threads: 2, ...options }),
    inputs: [{ name: input.name, dtype: 'float32', shape: input.shape }],
    seed: 0,
    process: 'worker',
    precision,
  });
  prepared.push(model);
  return model;
}

async function digits(n: number): Promise<{ x: Tensor; labels: number[] }> {
  const ds = await loadDataset({ kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy') }, '/');
  const batch = ds.read(0, n);
  return { x: batch.inputs.input!, labels: Array.from(batch.labels!.classes!) };
}

async function ortLogits(modelPath: string, x: Tensor): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(modelPath);
  const out = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', x.data as Float32Array, x.dims) });
  await session.release();
  return out[session.outputNames[0]!]!.data as Float32Array;
}

const argmax = (logits: Float32Array, classes: number): number[] =>
  Array.from({ length: logits.length / classes }, (_, r) => {
    const row = logits.subarray(r * classes, (r + 1) * classes);
    return row.indexOf(Math.max(...row));
  });
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const maxAbsDiff = (a: Float32Array, b: Float32Array): number => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

describe('@pbh/engine-pytorch', () => {
  it('is a plugin of three engines that probe the real torch, and transformers for the generate workload', async () => {
    expect(plugin.name).toBe('@pbh/engine-pytorch');
    expect(plugin.engines?.map((e) => e.name)).toEqual(['pytorch', 'torchscript', 'torch-compile', 'transformers', 'transformers-generate']);
    const transformers = plugin.engines!.find((e) => e.name === 'transformers')!;
    expect(await transformers.probe('worker')).toMatchObject({ available: true, version: expect.stringMatching(/^transformers 4\.57\.\d+, torch 2\.15\.0/) });
    // The manifest's defaults are the only ones: each engine's schema fills its own and refuses another's.
    expect(torchscriptEngine.optionsSchema.parse({})).toEqual({ preferSource: true, freeze: true, optimizeForInference: false });
    expect(torchCompileEngine.optionsSchema.parse({})).toEqual({ preferSource: true, backend: 'inductor', compileMode: 'default', fullgraph: false });
    expect(() => pytorchEngine.optionsSchema.parse({ freeze: true })).toThrow();
    for (const [engine] of ENGINES) {
      const availability = await engine.probe('worker');
      expect(availability).toMatchObject({ available: true, version: expect.stringMatching(/^2\.15\.0/), devices: expect.arrayContaining(['cpu']) });
      expect(availability.available && availability.details?.onnx2torch).toBe('1.5.15');
    }
  });

  it('says how to install torch when its Python is missing', async () => {
    const saved = process.env.PBH_PYTHON;
    process.env.PBH_PYTHON = path.join(workDir, 'no-such-python');
    try {
      for (const [engine] of ENGINES) {
        expect(await engine.probe('worker')).toMatchObject({ available: false, fix: expect.stringContaining('npx pbh doctor --fix --engine pytorch') });
      }
    } finally {
      if (saved === undefined) delete process.env.PBH_PYTHON;
      else process.env.PBH_PYTHON = saved;
    }
  });

  // The paper's families: the same top-1 as onnxruntime on 64 digits, every PyTorch engine.
  for (const family of ['digits_mobilenet_v2', 'digits_resnet', 'digits_vit']) {
    it.each(ENGINES.map(([e, p]) => [e.name, e, p] as const))(`runs ${family} through onnx2torch on %s with onnxruntime's top-1`, async (_name, engine, parse) => {
      const { x, labels } = await digits(64);
      const model = await prepare(engine, parse, suiteModel(family), { name: 'input', shape: [64, 1, 8, 8] });
      expect(model.facts).toMatchObject({ source_format: 'onnx', converter: 'onnx2torch', converter_version: '1.5.15' });
      expect(model.precision?.executed).toBe('fp32');
      expect(model.threads).toBe(2);
      const { outputs } = await model.sut.infer({ input: x });
      const logits = outputs[model.outputs[0]!.name]!.data as Float32Array;
      const reference = await ortLogits(suiteModel(family), x);
      expect(maxAbsDiff(logits, reference)).toBeLessThan(1e-3);
      const ours = argmax(logits, 10);
      expect(ours).toEqual(argmax(reference, 10));
      // Trained models: most of the 64 right, so an all-zero answer could not pass.
      expect(ours.filter((c, i) => c === labels[i]).length).toBeGreaterThan(48);
    });
  }

  it('records the compile time of TorchScript and torch.compile outside any session', async () => {
    for (const [engine, parse] of ENGINES.slice(1)) {
      const model = await prepare(engine, parse, suiteModel('digits_cnn'), { name: 'input', shape: [2, 1, 8, 8] });
      const facts = model.facts as { load_ms: number; build_ms: number; first_run_ms: number };
      expect(facts.build_ms).toBeGreaterThan(0);
      expect(model.compileMs).toBeCloseTo(facts.load_ms + facts.build_ms, 6);
      // The build ran the model, so the first call after prepare is not a compile.
      expect(facts.first_run_ms).toBeLessThan(facts.build_ms);
    }
  });

  it('loads a TorchScript .pt and a torch.export .pt2 natively, and both answer alike on every engine', async () => {
    const x: Tensor = { dtype: 'float32', dims: [3, 16], data: Float32Array.from({ length: 48 }, (_, i) => Math.sin(i)) };
    const answers: Float32Array[] = [];
    for (const [engine, parse] of ENGINES) {
      for (const file of [mlpPt, mlpPt2]) {
        if (engine === torchCompileEngine && file === mlpPt) {
          await expect(prepare(engine, parse, file, { name: 'features', shape: [3, 16] })).rejects.toThrow(/torch\.compile cannot compile a TorchScript module/);
          continue;
        }
        const model = await prepare(engine, parse, file, { name: 'features', shape: [3, 16] });
        expect(model.facts!.source_format).toBe(file.endsWith('.pt2') ? 'torch_export' : 'torchscript');
        const { outputs } = await model.sut.infer({ features: x });
        expect(model.outputs).toHaveLength(1);
        answers.push(outputs[model.outputs[0]!.name]!.data as Float32Array);
      }
    }
    expect(answers).toHaveLength(5);
    for (const a of answers.slice(1)) expect(maxAbsDiff(a, answers[0]!)).toBeLessThan(1e-5);
    expect(Math.max(...answers[0]!.map(Math.abs))).toBeGreaterThan(0);
  });

  it('refuses an ONNX op onnx2torch cannot convert, naming it', async () => {
    await expect(prepare(pytorchEngine, parseFor(pytorchEngine), hardmax, { name: 'x', shape: [2, 5] })).rejects.toThrow(
      /onnx2torch 1\.5\.15 has no converter for op Hardmax \(opset 13\)/,
    );
  });

  it('moves float32, int32, bool and int64 tensors through a multi-output model', async () => {
    prepared.push(await expectMixedIoRoundTrip(pytorchEngine, pytorchEngine.optionsSchema.parse({}), mixedIo, workDir));
  });

  it('runs sessions on resident batches, benches with torch.utils.benchmark and times layers with forward hooks', async () => {
    const { x } = await digits(4);
    // One thread: OpenMP's spinning pool swings by 20x on a shared 2-core machine, which no ratio survives.
    const model = await prepare(pytorchEngine, parseFor(pytorchEngine), suiteModel('digits_resnet'), { name: 'input', shape: [4, 1, 8, 8] }, { threads: 1 });
    await model.library.load([{ input: x }]);
    const session = await model.sut.closedLoop({ batches: 1, minQueries: 50, minDurationNs: 0 });
    expect(session.engineNs).toHaveLength(50);
    const bench = await model.probes.modelOnly!({ input: x }, 50);
    expect(bench.iterationNs).toHaveLength(50);
    // Both time the same module call on the same tensors.
    expect(median(bench.iterationNs)).toBeLessThan(median(session.engineNs) * 1.5);
    expect(median(bench.iterationNs)).toBeGreaterThan(median(session.engineNs) / 1.5);
    const layers = await model.probes.layers!({ input: x }, 5);
    const convs = layers.filter((l) => l.op_type === 'Conv2d');
    expect(convs.length).toBeGreaterThanOrEqual(4);
    expect(convs.every((l) => l.calls === 5 && l.input_shapes!.startsWith('[4,') && l.mean_ns > 0)).toBe(true);
    const total = layers.reduce((s, l) => s + l.mean_ns, 0);
    // The hooks add a Python call per layer, and the layers leave out the graph's own glue.
    expect(total).toBeLessThan(median(bench.iterationNs) * 3);
    expect(total).toBeGreaterThan(median(bench.iterationNs) * 0.3);
  });

  it('profiles TorchScript per operator with the PyTorch profiler', async () => {
    const { x } = await digits(2);
    const model = await prepare(torchscriptEngine, parseFor(torchscriptEngine), suiteModel('digits_cnn'), { name: 'input', shape: [2, 1, 8, 8] });
    const layers = await model.probes.layers!({ input: x }, 3);
    expect(layers.map((l) => l.name)).toEqual(expect.arrayContaining([expect.stringMatching(/conv/)]));
    expect(layers.every((l) => l.mean_ns > 0)).toBe(true);
  });

  it('pins the thread count from the options', async () => {
    const model = await prepare(pytorchEngine, parseFor(pytorchEngine), suiteModel('digits_cnn'), { name: 'input', shape: [1, 1, 8, 8] }, { threads: 1 });
    expect(model.threads).toBe(1);
  });

  it('executes bf16 through autocast where the CPU has bf16 units, and refuses it where it does not', async () => {
    const { x } = await digits(32);
    const flags = (await execa('grep', ['-m1', '^flags', '/proc/cpuinfo'])).stdout;
    const native = /\b(avx512_bf16|amx_bf16)\b/.test(flags);
    const attempt = prepare(pytorchEngine, parseFor(pytorchEngine), suiteModel('digits_resnet'), { name: 'input', shape: [32, 1, 8, 8] }, {}, 'bf16');
    if (!native) {
      await expect(attempt).rejects.toThrow(/bf16 on cpu is emulated here/);
      return;
    }
    const model = await attempt;
    expect(model.precision!.executed).toBe('bf16');
    expect(model.precision!.evidence).toMatch(/torch\.autocast\(bfloat16\).*bf16 x\d+/);
    const { outputs } = await model.sut.infer({ input: x });
    const logits = outputs.logits!.data as Float32Array;
    const reference = await ortLogits(suiteModel('digits_resnet'), x);
    // bf16 keeps 8 bits of mantissa: close to fp32, not equal.
    expect(maxAbsDiff(logits, reference)).toBeGreaterThan(0);
    const agree = argmax(logits, 10).filter((c, i) => c === argmax(reference, 10)[i]).length;
    expect(agree).toBeGreaterThanOrEqual(30);
  });
});
