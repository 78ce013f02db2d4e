import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset, type EngineProcess, type Precision, type PreparedModel } from '@pbh/core';
import plugin, { onnxRuntimeEngine } from '../src/index.js';
import { ROOT, suiteData, suiteModel } from '../../../test/suite.js';

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-ort-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

async function prepare(process: EngineProcess, batchSize: number, options: Record<string, unknown> = {}, precision: Precision = 'fp32', modelPath = suiteModel('digits_cnn')): Promise<PreparedModel> {
  return onnxRuntimeEngine.prepare({
    model: { name: path.basename(modelPath, '.onnx'), path: modelPath, workDir },
    batchSize,
    device: 'cpu',
    options: onnxRuntimeEngine.optionsSchema.parse(options),
    inputs: [],
    seed: 0,
    precision,
    process,
  });
}

describe('@pbh/engine-onnx', () => {
  it('is a plugin with one engine, available through both doors at one onnxruntime version', async () => {
    expect(plugin.name).toBe('@pbh/engine-onnx');
    expect(onnxRuntimeEngine.processes).toEqual(['worker', 'harness']);
    for (const process of onnxRuntimeEngine.processes) {
      const a = await onnxRuntimeEngine.probe(process);
      expect(a.available, JSON.stringify(a)).toBe(true);
      if (a.available) {
        expect(a.version).toBe(ort.env.versions.common);
        expect(a.devices).toContain('cpu');
      }
    }
  });

  it('runs the same closed loop in the worker (Python binding) as in the harness (onnxruntime-node), and says which', async () => {
    const ds = await loadDataset({ kind: 'npy', inputs: { input: suiteData('digits_x.npy') } }, '/');
    const batches = [0, 1, 2].map((b) => ({ input: ds.read(b * 4, 4).inputs.input! }));
    for (const process of onnxRuntimeEngine.processes) {
      const model = await prepare(process, 4, { intraOpNumThreads: 1 });
      try {
        expect(model.runsIn.process).toBe(process);
        expect(model.runsIn.binding).toBe(process === 'worker' ? 'onnxruntime (Python) in a pbh worker' : 'onnxruntime-node');
        await model.library.load(batches);
        const session = await model.sut.closedLoop({ batches: 3, minQueries: 30, minDurationNs: 0 });
        expect(session.engineNs).toHaveLength(30);
        expect(session.engineNs.every((ns) => ns > 0)).toBe(true);
        expect(session.wallNs).toBeGreaterThanOrEqual(session.engineNs.reduce((a, b) => a + b, 0));
        const timings = await model.sut.schedule({ batches: [0, 1, 2, 0], arrivalsNs: [0, 1e5, 2e5, 3e5], concurrency: 1 });
        expect(timings.completedNs).toHaveLength(4);
        expect((await model.sut.issue(2)).engineNs > 0n).toBe(true);
        await model.library.unload();
        await expect(model.sut.issue(0)).rejects.toThrow(/before .*load/);
      } finally {
        await model.dispose();
      }
    }
  });

  for (const process of ['worker', 'harness'] as const) {
    const prepare_ = (batchSize: number, options: Record<string, unknown> = {}, precision: Precision = 'fp32') => prepare(process, batchSize, options, precision);
    describe(`in the ${process}`, () => {

  it('predicts the same logits as a bare onnxruntime session in fp32 and reports engine time, threads and precision', async () => {
    const ds = await loadDataset({ kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy') }, '/');
    const batch = ds.read(0, 8);
    const x = batch.inputs.input!;
    const model = await prepare_(8, { intraOpNumThreads: 1 });
    try {
      expect(model.inputs[0]).toMatchObject({ name: 'input', dtype: 'float32' });
      expect(model.compileMs).toBeGreaterThan(0);
      expect(model.threads).toBe(1);
      expect(model.precision).toEqual({
        executed: 'fp32',
        evidence: "onnxruntime executes the graph's own element types (no precision conversion); session metadata: logits float32, input float32",
      });
      const r = await model.sut.infer({ input: x });
      const bare = await ort.InferenceSession.create(suiteModel('digits_cnn'));
      const expected = await bare.run({ input: new ort.Tensor('float32', x.data as Float32Array, x.dims) });
      await bare.release();
      expect(r.outputs.logits!.dims).toEqual([8, 10]);
      expect(Array.from(r.outputs.logits!.data as Float32Array)).toEqual(Array.from(expected.logits!.data as Float32Array));
      expect(r.engineNs).toBeGreaterThan(0n);
      // The trained CNN should get most of the first batch right: a sanity check that inputs are fed correctly.
      const logits = r.outputs.logits!.data as Float32Array;
      let correct = 0;
      for (let i = 0; i < 8; i++) {
        const row = Array.from(logits.subarray(i * 10, i * 10 + 10));
        if (row.indexOf(Math.max(...row)) === batch.labels!.classes![i]) correct++;
      }
      expect(correct).toBeGreaterThanOrEqual(6);
      // The graph's batch axis is symbolic: a last batch of 3 runs at its own size.
      expect(model.capabilities.smallerBatch).toBe(true);
      const short = await model.sut.infer({ input: ds.read(0, 3).inputs.input! });
      expect(short.outputs.logits!.dims).toEqual([3, 10]);
      expect(Array.from(short.outputs.logits!.data as Float32Array)).toEqual(Array.from(r.outputs.logits!.data as Float32Array).slice(0, 30));
    } finally {
      await model.dispose();
    }
  });

  it("maps onnxruntime's own profiler output to per-node timings", async () => {
    const ds = await loadDataset({ kind: 'npy', inputs: { input: suiteData('digits_x.npy') } }, '/');
    const model = await prepare_(4);
    try {
      const layers = await model.probes.layers!({ input: ds.read(0, 4).inputs.input! }, 5);
      expect(layers.length).toBeGreaterThanOrEqual(4);
      const ops = new Set(layers.map((l) => l.op_type));
      expect(ops.has('Conv') || ops.has('FusedConv')).toBe(true);
      expect(layers.every((l) => l.mean_ns > 0 && l.calls >= 1 && l.name.length > 0)).toBe(true);
      expect(layers[0]!.mean_ns).toBeGreaterThanOrEqual(layers.at(-1)!.mean_ns);
    } finally {
      await model.dispose();
    }
  });

  it('rejects a file that is not ONNX with onnxruntime\'s reason', async () => {
    await expect(
      onnxRuntimeEngine.prepare({
        model: { name: 'x', path: suiteData('digits.csv'), workDir },
        batchSize: 1,
        device: 'cpu',
        options: onnxRuntimeEngine.optionsSchema.parse({}),
        inputs: [],
        seed: 0,
        precision: 'fp32',
        process,
      }),
    ).rejects.toThrow(/onnxruntime cannot load .*digits\.csv/);
  });

  it('says it cannot run an fp32 graph in another precision instead of running fp32 anyway', async () => {
    expect(onnxRuntimeEngine.precisions).toEqual(['fp32']);
    await expect(prepare_(1, {}, 'fp16')).rejects.toThrow(/executes .*digits_cnn\.onnx in the graph's own precision, fp32; it cannot execute it in fp16/);
    // Threads left to onnxruntime (0) are not reported back by either binding.
    const model = await prepare_(1);
    try {
      expect(model.threads).toBeNull();
    } finally {
      await model.dispose();
    }
  });

  it('runs parallelRuns queries of a schedule at once on one session', async () => {
    const ds = await loadDataset({ kind: 'npy', inputs: { input: suiteData('digits_x.npy') } }, '/');
    const model = await prepare_(4, { intraOpNumThreads: 2, parallelRuns: 3 });
    try {
      expect(model.capabilities.maxConcurrency).toBe(3);
      await model.library.load([0, 1].map((b) => ({ input: ds.read(b * 4, 4).inputs.input! })));
      // Every query is due at once: up to three run together, each completing after its issue.
      const timings = await model.sut.schedule({ batches: [0, 1, 0, 1, 0, 1, 0, 1], arrivalsNs: Array(8).fill(0), concurrency: 3 });
      expect(timings.completedNs).toHaveLength(8);
      expect(timings.completedNs.every((done, q) => done > timings.issuedNs[q]!)).toBe(true);
      // The harness door refuses it as it is asked, the worker's proxy before sending it.
      await expect(Promise.resolve().then(() => model.sut.schedule({ batches: [0], arrivalsNs: [0], concurrency: 4 }))).rejects.toThrow(/concurrency 4/);
    } finally {
      await model.dispose();
    }
  });

    });
  }

  it('reads the same executed precision of a quantized graph through both doors, from its optimized graph', async () => {
    const quantized = path.join(workDir, 'digits_cnn.dynamic.int8.onnx');
    execFileSync(path.join(ROOT, '.venv', 'bin', 'python'), ['-c', 'import sys; from onnxruntime.quantization import quantize_dynamic; quantize_dynamic(sys.argv[1], sys.argv[2])', suiteModel('digits_cnn'), quantized], { stdio: ['ignore', 'ignore', 'pipe'] });
    const read: Record<string, unknown> = {};
    for (const process of onnxRuntimeEngine.processes) {
      const model = await prepare(process, 1, {}, 'int8', quantized);
      read[process] = model.precision;
      await model.dispose();
      await expect(prepare(process, 1, {}, 'fp32', quantized)).rejects.toThrow(/executes .* in the graph's own precision, int8; it cannot execute it in fp32/);
    }
    expect(read.worker).toEqual(read.harness);
    expect(read.worker).toMatchObject({ executed: 'int8', evidence: expect.stringMatching(/^onnxruntime's optimized graph \(graphOptimizationLevel all, .*\): int8 kernels .*ConvInteger x2/) });
  });

  it('refuses concurrent runs in the worker where onnxruntime has no intra-op pool to run them on', async () => {
    await expect(prepare('worker', 1, { intraOpNumThreads: 1, parallelRuns: 2 })).rejects.toThrow(/intraOpNumThreads 1 gives that pool none/);
  });

  it('validates options strictly', () => {
    expect(onnxRuntimeEngine.optionsSchema.safeParse({ intraOpThreads: 2 }).success).toBe(false);
    expect(onnxRuntimeEngine.optionsSchema.safeParse({ graphOptimizationLevel: 'max' }).success).toBe(false);
  });
});
