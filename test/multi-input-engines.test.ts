import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveWorkerCount, loadDataset, loadPlugin, type Engine, type PreparedModel, type Tensor, type TensorMap } from '@pbh/core';
import { onnxRuntimeEngine } from '@pbh/engine-onnx';
import { suiteData, suiteModel } from './suite.js';

// The bundled suite's wine_mlp: `features` float32 [N,12] and `category` int64 [N] (embedded by a Gather) -> `logits` [N,3].
const BATCH = 8;
const engineOf = async (pkg: string): Promise<Engine> => (await loadPlugin(pkg)).engines![0]!;
const [openvinoEngine, tvmEngine] = await Promise.all([engineOf('@pbh/engine-openvino'), engineOf('@pbh/engine-tvm')]);
const ENGINES: Engine[] = [onnxRuntimeEngine, openvinoEngine, tvmEngine];

let workDir: string;
let feeds: TensorMap;
const prepared = new Map<string, PreparedModel>();

async function firstTestSamples(n: number): Promise<TensorMap> {
  const dataset = await loadDataset(
    { kind: 'npy', inputs: { features: suiteData('wine_features.npy'), category: suiteData('wine_category.npy') }, labels: suiteData('wine_y.npy') },
    '/',
  );
  return dataset.read(0, n).inputs;
}

async function logits(engine: Engine, batch: TensorMap): Promise<Float32Array> {
  const { outputs } = await prepared.get(engine.name)!.sut.infer(batch);
  return outputs.logits!.data as Float32Array;
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

/** Every sample moved to another of the 8 categories: the features stay, only the int64 input changes. */
function otherCategories(category: Tensor): Tensor {
  const data = BigInt64Array.from(category.data as BigInt64Array, (c) => (c + 4n) % 8n);
  return { ...category, data };
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-multi-input-'));
  feeds = await firstTestSamples(BATCH);
  // One engine at a time: the machine has two cores and the native engines compile in their workers.
  for (const engine of ENGINES) {
    const availability = await engine.probe('worker');
    if (!availability.available) throw new Error(`${engine.name} is not available here: ${availability.reason} (fix: ${availability.fix})`);
    const options = engine.optionsSchema.parse(engine === tvmEngine ? { cacheDir: path.join(workDir, 'tvm-cache') } : {});
    prepared.set(engine.name, await engine.prepare({
      model: { name: 'wine_mlp', path: suiteModel('wine_mlp'), workDir },
      batchSize: BATCH,
      device: 'cpu',
      options,
      inputs: Object.entries(feeds).map(([name, t]) => ({ name, dtype: t.dtype, shape: t.dims })),
      seed: 0,
      process: engine.processes[0]!,
      precision: 'fp32',
    }));
  }
});
afterAll(async () => {
  await Promise.all([...prepared.values()].map((m) => m.dispose()));
  expect(liveWorkerCount()).toBe(0);
  await rm(workDir, { recursive: true, force: true });
});

describe('a two-input model (float32 features + int64 category) on every engine', () => {
  it('reads test samples as both inputs, each from the .npy file of the same name', () => {
    expect(feeds.features).toMatchObject({ dtype: 'float32', dims: [BATCH, 12] });
    expect(feeds.category).toMatchObject({ dtype: 'int64', dims: [BATCH] });
  });

  it.each(ENGINES.map((e) => [e.name, e] as const))('%s prepares both inputs and one logits output', (_, engine) => {
    const model = prepared.get(engine.name)!;
    // onnxruntime keeps the graph's dynamic batch axis; the native engines compile for the batch size they were given.
    const n = engine === onnxRuntimeEngine ? 'N' : BATCH;
    expect(model.inputs).toEqual([
      { name: 'features', dtype: 'float32', shape: [n, 12] },
      { name: 'category', dtype: 'int64', shape: [n] },
    ]);
    expect(model.outputs).toEqual([{ name: 'logits', dtype: 'float32', shape: [n, 3] }]);
  });

  it.each(ENGINES.slice(1).map((e) => [e.name, e] as const))('%s predicts the logits onnxruntime does (atol 1e-4)', async (_, engine) => {
    const reference = await logits(onnxRuntimeEngine, feeds);
    expect(reference.every(Number.isFinite)).toBe(true);
    expect(maxAbsDiff(await logits(engine, feeds), reference)).toBeLessThan(1e-4);
  });

  it.each(ENGINES.map((e) => [e.name, e] as const))('%s reads the int64 input: other categories give other logits, still as onnxruntime does', async (_, engine) => {
    const moved = { ...feeds, category: otherCategories(feeds.category!) };
    const changed = await logits(engine, moved);
    expect(maxAbsDiff(changed, await logits(engine, feeds))).toBeGreaterThan(0.1);
    expect(maxAbsDiff(changed, await logits(onnxRuntimeEngine, moved))).toBeLessThan(1e-4);
  });
});
