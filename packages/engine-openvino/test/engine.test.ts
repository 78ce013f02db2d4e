import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import * as ort from 'onnxruntime-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findVenvPython, liveWorkerCount, loadDataset, loadPlugin, type Precision, type PreparedModel, type Tensor } from '@pbh/core';
import { suiteData, suiteModel } from '../../../test/suite.js';
import { expectMixedIoRoundTrip } from '../../../test/engine-contract.js';

// OpenVINO's CPU plugin executes bf16 only where the CPU has these (AVX-512 BF16 or AMX); elsewhere it keeps f32.
const CPU_HAS_BF16 = /\b(avx512_bf16|amx_bf16)\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));

// The engine as the harness gets it: made from the package's pbh-engine.json.
const plugin = await loadPlugin('@pbh/engine-openvino');
const openvinoEngine = plugin.engines!.find((e) => e.name === 'openvino')!;
const OpenVINOOptionsSchema = openvinoEngine.optionsSchema;

let workDir: string;
let mixedIo: string;
const prepared: PreparedModel[] = [];

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-openvino-'));
  const python = findVenvPython()!.python;
  [mixedIo] = (await execa(python, [path.join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'make_models.py'), workDir])).stdout.trim().split('\n') as [string];
});
afterEach(async () => {
  await Promise.all(prepared.splice(0).map((m) => m.dispose()));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function prepare(model: string, batchSize: number, options: Record<string, unknown> = {}, modelPath = suiteModel(model), precision: Precision = 'fp32') {
  const m = await openvinoEngine.prepare({
    model: { name: model, path: modelPath, workDir },
    batchSize,
    device: 'cpu',
    options: OpenVINOOptionsSchema.parse(options),
    inputs: [{ name: 'input', dtype: 'float32', shape: [batchSize, 1, 8, 8] }],
    seed: 0,
    process: 'worker' as const,
    precision,
  });
  prepared.push(m);
  return m;
}

async function digitsBatch(n: number): Promise<{ x: Tensor; labels: number[] }> {
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

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

describe('@pbh/engine-openvino', () => {
  it('is a plugin whose engine probes the real runtime', async () => {
    expect(plugin.name).toBe('@pbh/engine-openvino');
    expect(plugin.engines).toEqual([openvinoEngine]);
    const availability = await openvinoEngine.probe('worker');
    expect(availability).toMatchObject({ available: true, version: '2026.4.1' });
    expect(availability.available && availability.devices).toContain('CPU');
    expect(availability.available && availability.details?.build).toMatch(/^2026\.4\.1-/);
  });

  it('predicts the same logits as onnxruntime on the trained digits CNN in fp32 (pinned, read back), with engine time', async () => {
    const { x, labels } = await digitsBatch(8);
    const model = await prepare('digits_cnn', 8, { threads: 1 }, suiteModel('digits_cnn'), 'fp32');
    expect(model.inputs).toEqual([{ name: 'input', dtype: 'float32', shape: [8, 1, 8, 8] }]);
    expect(model.outputs).toEqual([{ name: 'logits', dtype: 'float32', shape: [8, 10] }]);
    expect(model.compileMs).toBeGreaterThan(0);
    expect(model.facts).toMatchObject({ device: 'CPU', performance_hint: 'LATENCY', runtimeVersion: '2026.4.1' });
    expect(model.threads).toBe(1);
    expect(model.runsIn.binding).toBe('openvino (C API by ctypes) in a pbh worker');
    // Two convolutions and two fully connected layers, all read back as f32 whatever the CPU offers.
    expect(model.precision).toEqual({
      executed: 'fp32',
      evidence: 'INFERENCE_PRECISION_HINT=f32 set, compiled model reports f32; runtime precisions of 4 compute ops: f32 x4',
    });

    const result = await model.sut.infer({ input: x });
    const logits = result.outputs.logits!;
    expect(logits.dims).toEqual([8, 10]);
    expect(maxAbsDiff(logits.data as Float32Array, await ortLogits(suiteModel('digits_cnn'), x))).toBeLessThan(1e-4);
    expect(result.engineNs! > 0n).toBe(true);
    const predicted = labels.map((_, i) => {
      const row = Array.from((logits.data as Float32Array).subarray(i * 10, i * 10 + 10));
      return row.indexOf(Math.max(...row));
    });
    expect(predicted.filter((p, i) => p === labels[i]).length).toBeGreaterThanOrEqual(7);
  });

  it('runs a real ImageNet CNN (squeezenet) in fp32 like onnxruntime does', async () => {
    const n = 1 * 3 * 224 * 224;
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = Math.sin(i * 0.001);
    const x: Tensor = { dtype: 'float32', dims: [1, 3, 224, 224], data };
    const model = await openvinoEngine.prepare({
      model: { name: 'squeezenet', path: suiteModel('squeezenet'), workDir },
      batchSize: 1,
      device: 'cpu',
      options: OpenVINOOptionsSchema.parse({}),
      inputs: [],
      seed: 0,
      process: 'worker' as const,
      precision: 'fp32',
    });
    prepared.push(model);
    const name = model.inputs[0]!.name;
    const out = Object.values((await model.sut.infer({ [name]: x })).outputs)[0]!;
    const expected = await ortLogits(suiteModel('squeezenet'), x);
    const scale = Math.max(...Array.from(expected, Math.abs));
    expect(maxAbsDiff(out.data as Float32Array, expected) / scale).toBeLessThan(1e-3);
    expect(model.precision?.executed).toBe('fp32');
    expect(model.precision?.evidence).toMatch(/^INFERENCE_PRECISION_HINT=f32 set, compiled model reports f32; runtime precisions of \d+ compute ops: f32 x\d+$/);
  });

  it(`asks for bf16 and says truthfully what ran: ${CPU_HAS_BF16 ? 'bf16, this CPU has avx512_bf16/amx_bf16' : 'fp32, this CPU lacks avx512_bf16 and amx_bf16'}`, async () => {
    const { x } = await digitsBatch(8);
    const model = await prepare('digits_cnn', 8, {}, suiteModel('digits_cnn'), 'bf16');
    expect(model.precision?.evidence).toMatch(/^INFERENCE_PRECISION_HINT=bf16 set, compiled model reports \w+; runtime precisions of 4 compute ops: /);
    const logits = (await model.sut.infer({ input: x })).outputs.logits!.data as Float32Array;
    const reference = await ortLogits(suiteModel('digits_cnn'), x);
    const error = maxAbsDiff(logits, reference);
    if (CPU_HAS_BF16) {
      expect(model.precision?.executed).toBe('bf16');
      // bf16 keeps 8 significant bits (unit roundoff 2^-8); a few roundings deep, 16 of them bound this small CNN.
      expect(error).toBeLessThanOrEqual(16 * 2 ** -8 * Math.max(...Array.from(reference, Math.abs)));
    } else {
      expect(model.precision?.executed).toBe('fp32');
      expect(model.precision?.evidence).toMatch(/compiled model reports f32; runtime precisions of 4 compute ops: f32 x4; CPU OPTIMIZATION_CAPABILITIES: .*FP32/);
      expect(model.precision?.evidence).not.toMatch(/\bBF16\b/);
      expect(error).toBeLessThan(1e-4);
    }
  });

  it('refuses a precision INFERENCE_PRECISION_HINT cannot express instead of running another', async () => {
    const error = (await prepare('digits_cnn', 1, {}, suiteModel('digits_cnn'), 'fp64').catch((e: unknown) => e)) as Error;
    expect(error.message).toContain("OpenVINO's INFERENCE_PRECISION_HINT takes fp32, bf16, fp16, int8; it cannot be asked to execute 'fp64'");
  });

  it('asked int8 of a float graph, runs it and says it ran fp32 (no quantized region to run in int8)', async () => {
    const model = await prepare('digits_cnn', 1, {}, suiteModel('digits_cnn'), 'int8');
    expect(model.precision?.executed).toBe('fp32');
    expect(model.precision?.evidence).toMatch(/^INFERENCE_PRECISION_HINT=f32 set \(int8 asked: the ops outside quantized regions\), compiled model reports f32; runtime precisions of \d+ compute ops: f32 x\d+/);
  });

  it('moves float32, int32, bool and int64 tensors through a multi-output model', async () => {
    prepared.push(await expectMixedIoRoundTrip(openvinoEngine, OpenVINOOptionsSchema.parse({}), mixedIo, workDir));
  });

  it('benches model-only in latency mode: one timing per iteration', async () => {
    const { x } = await digitsBatch(4);
    const model = await prepare('digits_cnn', 4);
    const bench = await model.probes.modelOnly!({ input: x }, 50);
    expect(bench.iterationNs).toHaveLength(50);
    expect(bench.iterationNs.every((ns) => ns > 0)).toBe(true);
  });

  it('benches in throughput mode with an async queue: completion intervals that sum to less than the wall time', async () => {
    const { x } = await digitsBatch(4);
    const model = await prepare('digits_cnn', 4, { hint: 'throughput', streams: 2 });
    expect(model.facts).toMatchObject({ performance_hint: 'THROUGHPUT', num_streams: 2 });
    expect(model.facts?.optimal_number_of_infer_requests).toBeGreaterThanOrEqual(2);
    const started = process.hrtime.bigint();
    const bench = await model.probes.modelOnly!({ input: x }, 40);
    const wallNs = Number(process.hrtime.bigint() - started);
    expect(bench).toEqual({ iterationNs: expect.any(Array) });
    expect(bench.iterationNs).toHaveLength(40);
    const total = bench.iterationNs.reduce((s, v) => s + v, 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(wallNs);
  });

  it('reports per-layer timings of executed nodes with shapes', async () => {
    const { x } = await digitsBatch(4);
    const model = await prepare('digits_cnn', 4);
    const layers = await model.probes.layers!({ input: x }, 5);
    expect(layers.length).toBeGreaterThan(2);
    const conv = layers.find((l) => l.op_type === 'Convolution');
    expect(conv).toBeDefined();
    expect(conv!.calls).toBe(5);
    expect(conv!.mean_ns).toBeGreaterThan(0);
    expect(conv!.output_shapes).toMatch(/^\[4,\d+,\d+,\d+\]$/);
    expect(layers.every((l) => l.mean_ns >= 0 && l.name.length > 0)).toBe(true);
    // Profiling used its own compilation: the timed model still answers normally afterwards.
    expect((await model.sut.infer({ input: x })).outputs.logits!.dims).toEqual([4, 10]);
  });

  it('runs resident batches in the worker by index, timed around the runtime call, and refuses what does not fit', async () => {
    const { x } = await digitsBatch(12);
    const model = await prepare('digits_cnn', 4, { threads: 1 });
    const batches = [0, 1, 2].map((b) => ({ input: { ...x, dims: [4, 1, 8, 8], data: (x.data as Float32Array).subarray(b * 256, (b + 1) * 256) } }));
    await model.library.load(batches);
    for (const index of [2, 0, 1, 2]) expect((await model.sut.issue(index)).engineNs > 0n).toBe(true);
    await expect(model.sut.issue(3)).rejects.toThrow(/"run" index 3 is not a resident batch: 3 are loaded/);
    const backToBack = await model.sut.closedLoop({ batches: 3, minQueries: 9, minDurationNs: 0 });
    expect(backToBack.engineNs).toHaveLength(9);
    expect(backToBack.engineNs.every((ns) => ns > 0)).toBe(true);
    // A batch the compiled model cannot take is refused when it is loaded, never at run time.
    const wrong = { input: { dtype: 'float32' as const, dims: [2, 1, 8, 8], data: new Float32Array(128) } };
    await expect(model.library.load([wrong])).rejects.toThrow(/input 'input' is float32\[2, 1, 8, 8\], the compiled model takes float32\[4,1,8,8\]/);
    await expect(model.sut.issue(0)).rejects.toThrow(/before "load_samples"/);
  });

  it('runs a schedule on an AsyncInferQueue with several requests in flight (throughput hint, digits at batch 1)', async () => {
    const { x } = await digitsBatch(4);
    const model = await prepare('digits_cnn', 1, { hint: 'throughput', streams: 2 });
    // One infer request per stream: what OpenVINO says it runs at once.
    expect(model.capabilities.maxConcurrency).toBe(model.facts?.optimal_number_of_infer_requests);
    expect(model.capabilities.maxConcurrency).toBeGreaterThanOrEqual(2);
    await model.library.load([0, 1, 2, 3].map((b) => ({ input: { ...x, dims: [1, 1, 8, 8], data: (x.data as Float32Array).subarray(b * 64, (b + 1) * 64) } })));
    const queries = 400;
    // Half offline (all due at once), half a 200 µs cadence.
    const arrivalsNs = Array.from({ length: queries }, (_, q) => (q < queries / 2 ? 0 : (q - queries / 2) * 200_000));
    const schedule = { batches: arrivalsNs.map((_, q) => q % 4), arrivalsNs, concurrency: model.capabilities.maxConcurrency };
    const timings = await model.sut.schedule(schedule);
    expect(timings.completedNs).toHaveLength(queries);
    let overlapped = false;
    timings.issuedNs.forEach((issued, q) => {
      expect(issued).toBeGreaterThanOrEqual(arrivalsNs[q]!);
      expect(timings.completedNs[q]!).toBeGreaterThan(issued);
      if (q > 0) expect(issued).toBeGreaterThanOrEqual(timings.issuedNs[q - 1]!);
      if (q > 0 && issued < timings.completedNs[q - 1]!) overlapped = true;
    });
    // The offline half keeps every request busy: some query starts before the one before it completes.
    expect(overlapped).toBe(true);
    // Every request came back idle: a closed loop on the same model runs next.
    const session = await model.sut.closedLoop({ batches: 4, minQueries: 100, minDurationNs: 0 });
    expect(session.engineNs).toHaveLength(100);
  });

  it('runs resident batches of a two-input model with bool and int64 outputs', async () => {
    const model = await openvinoEngine.prepare({
      model: { name: 'mixed_io', path: mixedIo, workDir },
      batchSize: 2,
      device: 'cpu',
      options: OpenVINOOptionsSchema.parse({}),
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

  it('fails to prepare with OpenVINO’s own message for a file it cannot read', async () => {
    const bad = path.join(workDir, 'not-a-model.onnx');
    await execa('sh', ['-c', `printf 'garbage' > ${bad}`]);
    const error = (await prepare('broken', 1, {}, bad).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`openvino could not load ${bad}`);
    expect(error.message).toMatch(/OpenVINO cannot read .*not-a-model\.onnx/);
  });

  it('names the inputs when the harness feeds a name the model lacks', async () => {
    const error = (await openvinoEngine
      .prepare({
        model: { name: 'digits_cnn', path: suiteModel('digits_cnn'), workDir },
        batchSize: 1,
        device: 'cpu',
        options: OpenVINOOptionsSchema.parse({}),
        inputs: [{ name: 'pixels', dtype: 'float32', shape: [1, 1, 8, 8] }],
        seed: 0,
        process: 'worker' as const,
        precision: 'fp32',
      })
      .catch((e: unknown) => e)) as Error;
    expect(error.message).toContain("has no inputs named ['pixels'] (it has ['input'])");
  });

  it('validates options against the manifest: zod in the harness, and the worker fills the same defaults', async () => {
    expect(OpenVINOOptionsSchema.parse({})).toEqual({ hint: 'latency' });
    expect(() => OpenVINOOptionsSchema.parse({ hint: 'fast' })).toThrow();
    expect(() => OpenVINOOptionsSchema.parse({ threads: 0 })).toThrow();
    expect(() => OpenVINOOptionsSchema.parse({ numThreads: 2 })).toThrow();
    // Precision is the cell's, not an engine option.
    expect(() => OpenVINOOptionsSchema.parse({ inference_precision: 'bf16' })).toThrow();
    expect(OpenVINOOptionsSchema.parse({ streams: 'auto' })).toMatchObject({ streams: 'auto', hint: 'latency' });
    expect(openvinoEngine.precisions).toEqual(['fp32', 'bf16', 'fp16', 'int8']);
    // Options sent unparsed: the worker reads the manifest's defaults itself, and refuses a key it does not declare.
    const unparsed = (options: Record<string, unknown>) =>
      openvinoEngine.prepare({ model: { name: 'digits_cnn', path: suiteModel('digits_cnn'), workDir }, batchSize: 1, device: 'cpu', options, inputs: [], seed: 0, precision: 'fp32', process: 'worker' });
    const model = await unparsed({});
    prepared.push(model);
    expect(model.facts).toMatchObject({ requested: { hint: 'latency' }, performance_hint: 'LATENCY' });
    const error = (await unparsed({ numThreads: 2 }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain("engine openvino has no options ['numThreads']");
  });

  it("names outputs as the model file does, though compiling merged an inner tensor's name into one (silero-vad)", async () => {
    // silero-vad's OpenVINO-flavoured export, as its PyPI wheel ships it (npm test installs it into .cache/wild-models).
    const file = path.join(import.meta.dirname, '..', '..', '..', '.cache', 'wild-models', 'silero_vad', 'data', 'silero_vad_openvino_16k.onnx');
    const model = await openvinoEngine.prepare({
      model: { name: 'silero_vad_openvino', path: file, workDir },
      batchSize: 2,
      device: 'cpu',
      options: OpenVINOOptionsSchema.parse({}),
      inputs: [
        { name: 'input', dtype: 'float32', shape: [2, 576] },
        { name: 'state', dtype: 'float32', shape: [2, 2, 128] },
      ],
      seed: 0,
      process: 'worker' as const,
      precision: 'fp32',
    });
    prepared.push(model);
    expect(model.outputs.map((o) => o.name)).toEqual(['output', 'stateN']);
    const { outputs } = await model.sut.infer({
      input: { dtype: 'float32', dims: [2, 576], data: new Float32Array(2 * 576) },
      state: { dtype: 'float32', dims: [2, 2, 128], data: new Float32Array(2 * 2 * 128) },
    });
    expect(Object.keys(outputs).sort()).toEqual(['output', 'stateN']);
    expect(outputs.output!.dims).toEqual([2, 1]);
  });

  it('adds little IPC overhead to predict over the engine time', async () => {
    const { x } = await digitsBatch(1);
    const model = await prepare('digits_cnn', 1, { threads: 1 });
    for (let i = 0; i < 30; i++) await model.sut.infer({ input: x });
    const overhead: number[] = [];
    const engine: number[] = [];
    for (let i = 0; i < 200; i++) {
      const start = process.hrtime.bigint();
      const { engineNs } = await model.sut.infer({ input: x });
      const total = process.hrtime.bigint() - start;
      overhead.push(Number(total - engineNs!));
      engine.push(Number(engineNs!));
    }
    overhead.sort((a, b) => a - b);
    engine.sort((a, b) => a - b);
    console.log(`digits_cnn batch 1: engine median ${(engine[100]! / 1000).toFixed(1)} µs, predict - engine median ${(overhead[100]! / 1000).toFixed(1)} µs, p90 ${(overhead[180]! / 1000).toFixed(1)} µs`);
    expect(overhead[100]).toBeLessThan(5_000_000);
  });
});
