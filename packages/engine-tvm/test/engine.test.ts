import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import * as ort from 'onnxruntime-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findVenvPython, liveWorkerCount, loadDataset, loadPlugin, type Engine, type PreparedModel, type Tensor } from '@pbh/core';
import { suiteData, suiteModel } from '../../../test/suite.js';
import { expectMixedIoRoundTrip } from '../../../test/engine-contract.js';

let tvmEngine: Engine;
let workDir: string;
let cacheDir: string;
let mixedIo: string;
let celu: string;
const prepared: PreparedModel[] = [];

beforeAll(async () => {
  tvmEngine = (await loadPlugin('@pbh/engine-tvm')).engines!.find((e) => e.name === 'tvm')!;
  workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-tvm-'));
  cacheDir = path.join(workDir, 'cache');
  const python = findVenvPython()!.python;
  [mixedIo, celu] = (await execa(python, [path.join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'make_models.py'), workDir])).stdout.trim().split('\n') as [string, string];
});
afterEach(async () => {
  await Promise.all(prepared.splice(0).map((m) => m.dispose()));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function prepare(model: string, batchSize: number, options: Record<string, unknown> = {}, modelPath = suiteModel(model)) {
  const m = await tvmEngine.prepare({
    model: { name: model, path: modelPath, workDir },
    batchSize,
    device: 'cpu',
    options: tvmEngine.optionsSchema.parse({ cacheDir, ...options }),
    inputs: [{ name: 'input', dtype: 'float32', shape: [batchSize, 1, 8, 8] }],
    seed: 0,
    process: 'worker' as const,
    precision: 'fp32',
  });
  prepared.push(m);
  return m;
}

async function digitsBatch(n: number): Promise<Tensor> {
  const ds = await loadDataset({ kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy') }, '/');
  return ds.read(0, n).inputs.input!;
}

async function ortLogits(modelPath: string, x: Tensor): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(modelPath);
  const out = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', x.data as Float32Array, x.dims) });
  await session.release();
  return out[session.outputNames[0]!]!.data as Float32Array;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('@pbh/engine-tvm', () => {
  it('is a plugin whose engine probes the real runtime', async () => {
    const plugin = await loadPlugin('@pbh/engine-tvm');
    expect(plugin.name).toBe('@pbh/engine-tvm');
    expect(plugin.engines!.map((e) => e.name)).toEqual(['tvm']);
    const availability = await tvmEngine.probe('worker');
    expect(availability).toMatchObject({ available: true, version: '0.27.0.post1', devices: ['cpu'] });
    expect(availability.available && availability.details?.host_cpu).toMatch(/\w+/);
  });

  it.each([1, 8])('predicts the same logits as onnxruntime on the digits CNN in fp32 at batch %i', async (batch) => {
    const x = await digitsBatch(batch);
    const model = await prepare('digits_cnn', batch, { cache: false });
    expect(model.inputs).toEqual([{ name: 'input', dtype: 'float32', shape: [batch, 1, 8, 8] }]);
    expect(model.outputs).toEqual([{ name: 'logits', dtype: 'float32', shape: [batch, 10] }]);
    expect(model.facts).toMatchObject({ device: 'cpu', opt_level: 3, tune: false, cache: false, runtimeVersion: '0.27.0.post1' });
    const { import_ms: importMs, build_ms: buildMs } = model.facts as { import_ms: number; build_ms: number };
    expect(importMs).toBeGreaterThan(0);
    expect(buildMs).toBeGreaterThan(0);
    expect(model.compileMs).toBeCloseTo(importMs + buildMs, 6);
    expect(model.threads).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(model.facts!.target as string)).toMatchObject({ kind: 'llvm', mcpu: model.facts!.host_cpu, 'num-cores': model.threads });
    // Two conv2d and two matmul (the Gemms) in float32.
    expect(model.precision).toEqual({
      executed: 'fp32',
      evidence: 'Relax module imported from the ONNX graph: the 4 convolutions and matmuls of main produce float32 x4; compiled as imported (no mixed-precision pass)',
    });

    const result = await model.sut.infer({ input: x });
    expect(result.outputs.logits!.dims).toEqual([batch, 10]);
    expect(maxAbsDiff(result.outputs.logits!.data as Float32Array, await ortLogits(suiteModel('digits_cnn'), x))).toBeLessThan(1e-4);
    expect(result.engineNs! > 0n).toBe(true);
  });

  it('serves a second prepare from the compiled-library cache and reports the original compile time', async () => {
    const x = await digitsBatch(2);
    const first = await prepare('digits_cnn', 2);
    expect(first.facts).toMatchObject({ cache: true, cache_hit: false, cache_dir: cacheDir });
    const second = await prepare('digits_cnn', 2);
    expect(second.facts).toMatchObject({ cache_hit: true, cache_key: first.facts!.cache_key });
    expect(second.compileMs).toBe(first.compileMs);
    expect(second.precision).toEqual(first.precision);
    expect(second.threads).toBe(first.threads);
    expect(second.facts!.build_ms).toBe(first.facts!.build_ms);
    const [a, b] = await Promise.all([first.sut.infer({ input: x }), second.sut.infer({ input: x })]);
    expect(Array.from(b.outputs.logits!.data as Float32Array)).toEqual(Array.from(a.outputs.logits!.data as Float32Array));
    // A different build option is a different key.
    const other = await prepare('digits_cnn', 2, { optLevel: 2 });
    expect(other.facts).toMatchObject({ cache_hit: false });
    expect(other.facts!.cache_key).not.toBe(first.facts!.cache_key);
  });

  it('fuses less at optLevel 0: every op is its own kernel', async () => {
    const fused = await prepare('digits_cnn', 1, { cache: false });
    const unfused = await prepare('digits_cnn', 1, { cache: false, optLevel: 0 });
    expect(unfused.facts!.kernels as number).toBeGreaterThan(fused.facts!.kernels as number);
  });

  it('moves float32, int32, bool and int64 tensors through a multi-output model', async () => {
    prepared.push(await expectMixedIoRoundTrip(tvmEngine, tvmEngine.optionsSchema.parse({ cache: false }), mixedIo, workDir));
  });

  it('benches model-only with time_evaluator and profiles kernels whose times add up to the model time', async () => {
    const x = await digitsBatch(4);
    const model = await prepare('digits_cnn', 4, { cache: false });
    const engine: number[] = [];
    for (let i = 0; i < 10; i++) engine.push(Number((await model.sut.infer({ input: x })).engineNs!));
    const bench = await model.probes.modelOnly!({ input: x }, 30);
    expect(bench.iterationNs).toHaveLength(30);
    expect(bench.iterationNs.every((ns) => Number.isInteger(ns) && ns > 0)).toBe(true);
    // Both time the same compiled model; infer adds the Python call and the outputs' numpy views around the VM call.
    expect(median(bench.iterationNs)).toBeLessThan(median(engine) * 2);
    expect(median(bench.iterationNs)).toBeGreaterThan(median(engine) / 5);

    const layers = await model.probes.layers!({ input: x }, 5);
    const conv = layers.filter((l) => l.op_type === 'conv2d');
    expect(conv).toHaveLength(2);
    expect(conv.map((l) => l.output_shapes).sort()).toEqual(['[4,16,8,8]', '[4,32,8,8]']);
    expect(conv.every((l) => l.calls === 5 && l.input_shapes!.startsWith('[4,'))).toBe(true);
    expect(layers.map((l) => l.op_type)).toEqual(expect.arrayContaining(['conv2d', 'max_pool2d', 'matmul']));
    expect(layers.every((l) => l.mean_ns > 0 && !l.name.startsWith('vm.builtin'))).toBe(true);
    const total = layers.reduce((s, l) => s + l.mean_ns, 0);
    expect(total).toBeGreaterThan(median(bench.iterationNs) * 0.5);
    expect(total).toBeLessThan(median(bench.iterationNs) * 2);
    // Profiling leaves the model answering normally.
    expect((await model.sut.infer({ input: x })).outputs.logits!.dims).toEqual([4, 10]);
  });

  it('tunes with MetaSchedule when asked and still matches onnxruntime in fp32', async () => {
    const x = await digitsBatch(2);
    const model = await prepare('digits_cnn', 2, { cache: false, tune: true, tuneTrialsPerTask: 2 });
    const facts = model.facts as Record<string, unknown>;
    expect(facts).toMatchObject({ tune: true, tune_trials_per_task: 2, tune_budget_exhausted: false });
    expect(facts.tuned_kernels as number).toBeGreaterThan(0);
    expect(facts.tune_trials as number).toBeGreaterThan(0);
    expect(model.compileMs).toBeCloseTo((facts.import_ms as number) + (facts.build_ms as number) + (facts.tune_ms as number), 6);
    const { outputs } = await model.sut.infer({ input: x });
    expect(maxAbsDiff(outputs.logits!.data as Float32Array, await ortLogits(suiteModel('digits_cnn'), x))).toBeLessThan(1e-4);
  });

  it("fails to prepare with TVM's own message for an op its ONNX frontend lacks", async () => {
    const error = (await tvmEngine
      .prepare({
        model: { name: 'celu', path: celu, workDir },
        batchSize: 1,
        device: 'cpu',
        options: tvmEngine.optionsSchema.parse({ cache: false }),
        inputs: [],
        seed: 0,
        process: 'worker' as const,
        precision: 'fp32',
      })
      .catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain(`tvm could not load ${celu}`);
    expect(error.message).toContain('OpNotImplemented: The following operators are not supported for frontend ONNX: Celu');
  });

  it('fails to prepare with the reader’s message for a file that is not ONNX', async () => {
    const bad = path.join(workDir, 'not-a-model.onnx');
    await writeFile(bad, 'garbage');
    const error = (await prepare('broken', 1, {}, bad).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`tvm could not load ${bad}`);
    expect(error.message).toMatch(/onnx cannot read .*not-a-model\.onnx: DecodeError/);
  });

  it('names what is wrong with the request: input names, device, batch size at predict', async () => {
    const request = {
      model: { name: 'digits_cnn', path: suiteModel('digits_cnn'), workDir },
      batchSize: 1,
      options: tvmEngine.optionsSchema.parse({ cacheDir }),
      seed: 0,
      process: 'worker' as const,
      precision: 'fp32' as const,
    };
    const badName = (await tvmEngine
      .prepare({ ...request, device: 'cpu', inputs: [{ name: 'pixels', dtype: 'float32', shape: [1, 1, 8, 8] }] })
      .catch((e: unknown) => e)) as Error;
    expect(badName.message).toContain("has no inputs named ['pixels'] (it has ['input'])");
    const gpu = (await tvmEngine.prepare({ ...request, device: 'gpu', inputs: [] }).catch((e: unknown) => e)) as Error;
    expect(gpu.message).toContain("device 'gpu' is not supported");
    const fp16 = (await tvmEngine.prepare({ ...request, device: 'cpu', inputs: [], precision: 'fp16' }).catch((e: unknown) => e)) as Error;
    expect(fp16.message).toContain("TVM compiles " + suiteModel('digits_cnn') + " in the graph's own precision, fp32; it cannot execute it in fp16");
    const misspelt = (await tvmEngine.prepare({ ...request, device: 'cpu', inputs: [], options: { opt_level: 2 } }).catch((e: unknown) => e)) as Error;
    expect(misspelt.message).toContain("engine tvm has no options ['opt_level']");
    // Options that skipped the schema get the manifest's defaults in the worker: it keeps none of its own.
    const unparsed = await tvmEngine.prepare({ ...request, device: 'cpu', inputs: [], options: { cache: false } });
    prepared.push(unparsed);
    expect(unparsed.facts).toMatchObject({ opt_level: 3, tune: false, cache: false, requested: { optLevel: 3, tune: false, tuneTrialsPerTask: 8, tuneBudgetS: 600, cache: false, cacheDir: '.cache/tvm' } });

    const model = await prepare('digits_cnn', 1);
    const error = (await model.sut.infer({ input: await digitsBatch(3) }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain("input 'input' is float32[3, 1, 8, 8] but the model was built for float32[1, 1, 8, 8]");
  });

  it('runs resident batches in the worker by index, timed around the VM call, and refuses what does not fit', async () => {
    const x = await digitsBatch(12);
    const model = await prepare('digits_cnn', 4);
    const batches = [0, 1, 2].map((b) => ({ input: { ...x, dims: [4, 1, 8, 8], data: (x.data as Float32Array).subarray(b * 256, (b + 1) * 256) } }));
    await model.library.load(batches);
    for (const index of [2, 0, 1, 2]) expect((await model.sut.issue(index)).engineNs > 0n).toBe(true);
    await expect(model.sut.issue(3)).rejects.toThrow(/"run" index 3 is not a resident batch: 3 are loaded/);
    const backToBack = await model.sut.closedLoop({ batches: 3, minQueries: 9, minDurationNs: 0 });
    expect(backToBack.engineNs).toHaveLength(9);
    expect(backToBack.engineNs.every((ns) => ns > 0)).toBe(true);
    // A batch the built model cannot take is refused when it is loaded, never at run time.
    const wrong = { input: { dtype: 'float32' as const, dims: [2, 1, 8, 8], data: new Float32Array(128) } };
    await expect(model.library.load([wrong])).rejects.toThrow(/input 'input' is float32\[2, 1, 8, 8\] but the model was built for float32\[4, 1, 8, 8\]/);
    await expect(model.sut.issue(0)).rejects.toThrow(/before "load_samples"/);
  });

  it('runs a closed-loop session and a one-at-a-time schedule in the worker on digits', async () => {
    const x = await digitsBatch(4);
    const model = await prepare('digits_cnn', 1);
    expect(model.capabilities.maxConcurrency).toBe(1);
    await model.library.load([0, 1, 2, 3].map((b) => ({ input: { ...x, dims: [1, 1, 8, 8], data: (x.data as Float32Array).subarray(b * 64, (b + 1) * 64) } })));
    const session = await model.sut.closedLoop({ batches: 4, minQueries: 200, minDurationNs: 20e6 });
    expect(session.engineNs.length).toBeGreaterThanOrEqual(200);
    expect(session.wallNs).toBeGreaterThanOrEqual(20e6);
    // digits at batch 1 is tens of µs a call here; no query can be slower than the whole session.
    const sorted = [...session.engineNs].sort((a, b) => a - b);
    expect(sorted[0]!).toBeGreaterThan(1_000);
    expect(sorted[sorted.length >> 1]!).toBeLessThan(5e6);
    expect(session.engineNs.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(session.wallNs);
    const schedule = { batches: [0, 1, 2, 3, 0, 1], arrivalsNs: [0, 0, 0, 1e6, 2e6, 3e6], concurrency: 1 };
    const timings = await model.sut.schedule(schedule);
    timings.issuedNs.forEach((issued, q) => {
      expect(issued).toBeGreaterThanOrEqual(schedule.arrivalsNs[q]!);
      expect(timings.completedNs[q]!).toBeGreaterThan(issued);
      // One at a time: each query is issued after the one before completed.
      if (q > 0) expect(issued).toBeGreaterThanOrEqual(timings.completedNs[q - 1]!);
    });
    await expect(model.sut.schedule({ ...schedule, concurrency: 2 })).rejects.toThrow(/outside 1\.\.1/);
  });

  it('runs resident batches of a two-input model with bool and int64 outputs', async () => {
    const model = await tvmEngine.prepare({
      model: { name: 'mixed_io', path: mixedIo, workDir },
      batchSize: 2,
      device: 'cpu',
      options: tvmEngine.optionsSchema.parse({ cache: false }),
      inputs: [
        { name: 'a', dtype: 'float32', shape: [2, 3] },
        { name: 'b', dtype: 'int32', shape: [2, 3] },
      ],
      seed: 0,
      process: 'worker' as const,
      precision: 'fp32',
    });
    prepared.push(model);
    const batch = (k: number) => ({
      b: { dtype: 'int32' as const, dims: [2, 3], data: new Int32Array(6).fill(k) },
      a: { dtype: 'float32' as const, dims: [2, 3], data: new Float32Array(6).fill(k / 2) },
    });
    await model.library.load([batch(1), batch(2)]);
    expect((await model.sut.issue(1)).engineNs > 0n).toBe(true);
    expect((await model.sut.issue(0)).engineNs > 0n).toBe(true);
  });

  it('reports the worker pid and its memory, and disposes it', async () => {
    const model = await prepare('digits_cnn', 1);
    const pid = model.runsIn.pid;
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect((await model.probes.memory()).rssBytes).toBeGreaterThan(20_000_000);
    await model.dispose();
    prepared.length = 0;
    await new Promise((r) => setTimeout(r, 100));
    expect(() => process.kill(pid, 0)).toThrow();
    expect(liveWorkerCount()).toBe(0);
  });

  it('validates options', () => {
    expect(tvmEngine.optionsSchema.parse({})).toEqual({ optLevel: 3, tune: false, tuneTrialsPerTask: 8, tuneBudgetS: 600, cache: true, cacheDir: '.cache/tvm' });
    expect(tvmEngine.precisions).toEqual(['fp32']);
    expect(() => tvmEngine.optionsSchema.parse({ optLevel: 5 })).toThrow();
    expect(() => tvmEngine.optionsSchema.parse({ threads: 0 })).toThrow();
    expect(() => tvmEngine.optionsSchema.parse({ opt_level: 2 })).toThrow();
    expect(tvmEngine.optionsSchema.parse({ threads: 2, mcpu: 'x86-64', tune: true })).toMatchObject({ threads: 2, mcpu: 'x86-64', tune: true });
  });
});
