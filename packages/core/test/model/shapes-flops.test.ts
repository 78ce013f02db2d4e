import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeModel } from '../../src/model/analyze.js';
import { readOnnxModel } from '../../src/model/onnx-reader.js';
import { inferShapes } from '../../src/model/shapes.js';
import { makeFixtures, type FixtureModel, type Fixtures } from './fixtures.js';

let fx: Fixtures;
beforeAll(async () => {
  fx = await makeFixtures();
});
afterAll(async () => {
  await fx?.cleanup();
});

/** Every node output whose shape onnx knows must match PBH's inferred shape. */
function expectShapesMatch(expected: FixtureModel, outputsOf: Map<string, number[] | null>): number {
  let compared = 0;
  for (const [name, dims] of Object.entries(expected.shapes ?? {})) {
    if (!outputsOf.has(name)) continue;
    expect({ name, shape: outputsOf.get(name) }).toEqual({ name, shape: dims });
    compared++;
  }
  return compared;
}

async function outputShapes(file: string): Promise<Map<string, number[] | null>> {
  const { model } = await readOnnxModel(file);
  const s = inferShapes(model);
  const out = new Map<string, number[] | null>();
  for (const n of model.graph.nodes) for (const o of n.outputs) if (o !== '') out.set(o, s.shapes.get(o) ?? null);
  return out;
}

describe('shapes and FLOPs on hand-built models (checked against onnx shape inference / reference runs)', () => {
  for (const name of ['convnet', 'reshape_ops']) {
    it(`${name}: every node shape and the FLOPs total`, async () => {
      const m = fx.model(name);
      const a = await analyzeModel(m.file);
      const compared = expectShapesMatch(m, await outputShapes(m.file));
      expect(compared).toBeGreaterThanOrEqual(a.nodes.length - 2);
      expect(a.unknownShapeOps).toEqual([]);
      expect(a.flopsLowerBound).toBe(false);
      expect(a.flopsPerSample).toBe(m.flops);
      for (const [op, f] of Object.entries(m.flops_by_op ?? {})) expect({ op, f: a.flopsByOp[op] ?? 0 }).toEqual({ op, f });
      expect(a.parameters).toBe(m.params);
      expect(a.batchSize).toBe(1);
    });
  }

  it('misc_ops: Split, Resize, Expand, Tile, TopK, ArgMax, norms, DepthToSpace, Where, Gather, Einsum, negative-step Slice', async () => {
    const m = fx.model('misc_ops');
    const a = await analyzeModel(m.file);
    const compared = expectShapesMatch(m, await outputShapes(m.file));
    expect(compared).toBe(a.nodes.reduce((k, n) => k + n.outputShapes.length, 0));
    expect(a.unknownShapeOps).toEqual([]);
    const einsum = a.nodes.find((n) => n.opType === 'Einsum')!;
    expect(einsum.flops).toBe(2 * (1 * 2 * 2 * 4 * 4 * 5));
  });

  it('binds the symbolic batch to 1 and keeps the declared symbol in the I/O table', async () => {
    const a = await analyzeModel(fx.model('convnet').file);
    expect(a.inputs).toEqual([{ name: 'x', dtype: 'float32', shape: ['N', 3, 32, 32] }]);
    const fc = a.nodes.find((n) => n.name === 'fc')!;
    expect(fc.outputShapes).toEqual([[1, 10]]);
    expect(fc.flops).toBe(2 * 10 * 8 + 10);
  });

  it('a fixed batch is divided out of per-sample FLOPs', async () => {
    const m = fx.model('fixed_batch');
    const a = await analyzeModel(m.file);
    expect(a.batchSize).toBe(4);
    expect(a.flopsPerSample).toBe(m.flops! / 4);
    expect(a.nodes[0]!.outputShapes).toEqual([[4, 8, 8, 8]]);
  });

  it('ceil_mode drops a last window that would start in the padding (as the operator doc and onnx reference say)', async () => {
    const m = fx.model('ceil_edge');
    const a = await analyzeModel(m.file);
    expect(a.nodes[0]!.outputShapes[0]).toEqual(m.output_shape);
  });

  it('an unknown op leaves downstream shapes unknown, the total a lower bound, and says which nodes', async () => {
    const m = fx.model('unknown_op');
    const a = await analyzeModel(m.file);
    expect(a.unsupportedOps).toEqual(['com.example.Mystery']);
    expect(a.flopsLowerBound).toBe(true);
    // relu's output is a graph output whose declared shape PBH uses, so relu itself is counted.
    expect(a.unknownShapeOps.map((u) => u.node)).toEqual(['mystery', 'conv2']);
    expect(a.unknownShapeOps[0]!.reason).toMatch(/no .*rule for com\.example\.Mystery/);
    expect(a.unknownShapeOps[1]!.reason).toMatch(/shape of .* is unknown/);
    expect(a.nodes.find((n) => n.name === 'conv2')!.outputShapes).toEqual([null]);
    expect(a.flopsPerSample).toBe(m.node_flops!['conv1']! + m.node_flops!['relu']!);
    expect(a.opCensus).toEqual({ Conv: 2, 'com.example.Mystery': 1, Relu: 1 });
  });

  it("the model's own value_info fills in shapes after an unknown op", async () => {
    const m = fx.model('unknown_op_vi');
    const a = await analyzeModel(m.file);
    expect(a.unknownShapeOps.map((u) => u.node)).toEqual(['mystery']);
    const nf = m.node_flops!;
    expect(a.flopsPerSample).toBe(nf['conv1']! + nf['conv2']! + nf['relu']!);
    expect(a.flopsLowerBound).toBe(true);
  });
});

describe('ONNX light test models (weights as ConstantOfShape)', () => {
  it('FLOPs of every light model match the independent Python count', async () => {
    for (const [name, m] of Object.entries(fx.light)) {
      const a = await analyzeModel(m.file);
      expect({ name, flops: a.flopsPerSample }).toEqual({ name, flops: m.flops });
      expect({ name, unknown: a.unknownShapeOps }).toEqual({ name, unknown: [] });
      const shapes = await outputShapes(m.file);
      expect(expectShapesMatch(m, shapes)).toBeGreaterThan(0);
    }
  });

  it('ResNet-50: ~4.1 GMACs = ~8.2 GFLOPs at 224x224, ~25.6 M parameters', async () => {
    const a = await analyzeModel(fx.light['light_resnet50']!.file);
    expect(a.flopsPerSample! / 2).toBeGreaterThan(4.05e9);
    expect(a.flopsPerSample! / 2).toBeLessThan(4.15e9);
    expect(a.flopsByOp['Conv']! / 2).toBeCloseTo(4.09e9, -8);
    // 25.557 M weights + BatchNorm running mean/var (counted: they are float constants).
    expect(a.parameters).toBeGreaterThan(25.5e6);
    expect(a.parameters).toBeLessThan(25.7e6);
    expect(a.sparsity.perTensor.length).toBe(54);
  });

  it('SqueezeNet: ~0.35 GMACs', async () => {
    const a = await analyzeModel(fx.light['light_squeezenet']!.file);
    expect(a.flopsPerSample! / 2).toBeGreaterThan(0.34e9);
    expect(a.flopsPerSample! / 2).toBeLessThan(0.36e9);
  });
});
