import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeModel } from '../../src/model/analyze.js';
import { readOnnxModel } from '../../src/model/onnx-reader.js';
import { checkNM, nmPatternHolds } from '../../src/model/sparsity.js';
import { makeFixtures, type Fixtures } from './fixtures.js';

let fx: Fixtures;
beforeAll(async () => {
  fx = await makeFixtures();
});
afterAll(async () => {
  await fx?.cleanup();
});

describe('checkNM (stored layout: rows = dim0, groups along prod(rest))', () => {
  const t = (data: number[], dims: number[]) => ({ name: 'w', dims, data });

  it('holds when every group of m has at most n nonzeros', () => {
    const w = t([1, 0, 2, 0, 0, 3, 0, 4], [2, 4]);
    expect(checkNM([w], 2, 4).holds).toBe(true);
    expect(checkNM([w], 1, 2).holds).toBe(true);
    expect(checkNM([w], 1, 4).holds).toBe(false);
    expect(checkNM([w], 1, 4).perTensor[0]).toMatchObject({ groups: 2, violatingGroups: 2 });
  });

  it('groups restart at every row', () => {
    // Row length 6: groups [0..4) and a shorter [4..6) per row; flat groups of 4 would straddle rows.
    const w = t([1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1], [2, 6]);
    const r = checkNM([w], 2, 4);
    expect(r.holds).toBe(true);
    expect(r.perTensor[0]!.groups).toBe(4);
  });

  it('a shorter last group is checked by the same rule (as the suite generator defines it)', () => {
    // [2, 1, 3, 3] -> rows of 9: groups 4, 4, 1.
    const ok = t([1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 0, 1], [2, 1, 3, 3]);
    expect(checkNM([ok], 2, 4).holds).toBe(true);
    expect(checkNM([ok], 2, 4).perTensor[0]!.groups).toBe(6);
    const bad = t([1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 0, 1], [2, 1, 3, 3]);
    expect(checkNM([bad], 2, 4).holds).toBe(false);
  });

  it('-0 is a zero; rank-1 tensors never hold; bad n:m is rejected', () => {
    expect(checkNM([t([-0, 1, -0, 2], [1, 4])], 2, 4).holds).toBe(true);
    expect(checkNM([{ name: 'b', dims: [4], data: [0, 0, 0, 0] }], 2, 4).holds).toBe(false);
    expect(() => checkNM([], 5, 4)).toThrow(RangeError);
  });
});

describe('sparsity of hand-built models (expected values computed with numpy)', () => {
  const kinds = ['dense', 'unstructured60', 'verysparse', 'nm24', 'nm14', 'nm48', 'nm24_wrong_axis'];
  for (const kind of kinds) {
    it(`sparse_${kind}`, async () => {
      const m = fx.model(`sparse_${kind}`);
      const e = m.sparsity!;
      const a = await analyzeModel(m.file);
      const s = a.sparsity;
      expect(s.actual).toBeCloseTo(e.actual, 12);
      expect({ kind: s.kind, n: s.n, m: s.m }).toEqual({ kind: e.kind, n: e.n, m: e.m });
      expect(s.nmPatternHolds).toBe(e.kind === 'n_m' ? true : null);
      for (const p of e.patterns) {
        const got = s.patterns.find((q) => q.n === p.n && q.m === p.m)!;
        expect({ nm: `${p.n}:${p.m}`, holds: got.holds }).toEqual({ nm: `${p.n}:${p.m}`, holds: p.holds });
        expect(got.saturation).toBeCloseTo(p.saturation, 12);
      }
      expect(Object.fromEntries(s.perTensor.map((t) => [t.name, t.zeros]))).toEqual(e.per_tensor);
      expect(a.parameters).toBe(m.params);
      expect(a.flopsPerSample).toBe(m.flops);
      expect(a.quantization).toBeNull();
    });
  }

  it('[K, N] weights (MatMul, Gemm without transB) are read along K', async () => {
    const a = await analyzeModel(fx.model('sparse_nm24').file);
    const orient = Object.fromEntries(a.sparsity.perTensor.map((t) => [t.name, [t.consumerOp, t.orientation]]));
    expect(orient).toEqual({
      Wc: ['Conv', 'as_stored'],
      Wg: ['Gemm', 'transposed'],
      Wm: ['MatMul', 'transposed'],
      Wh: ['Gemm', 'as_stored'],
    });
    expect(a.sparsity.perTensor.every((t) => t.nm === '2:4')).toBe(true);
  });

  it('nmPatternHolds answers a declared pattern from the stored histograms', async () => {
    const a = await analyzeModel(fx.model('sparse_nm14').file);
    expect(nmPatternHolds(a.sparsity, 1, 4)).toBe(true);
    expect(nmPatternHolds(a.sparsity, 2, 8)).toBe(true);
    expect(nmPatternHolds(a.sparsity, 1, 8)).toBe(false);
    expect(nmPatternHolds(a.sparsity, 2, 3)).toBeNull();
    const u = await analyzeModel(fx.model('sparse_unstructured60').file);
    expect(nmPatternHolds(u.sparsity, 2, 4)).toBe(false);
  });

  it('very sparse unstructured weights that satisfy 2:4 by accident are not called 2:4', async () => {
    const a = await analyzeModel(fx.model('sparse_verysparse').file);
    const p24 = a.sparsity.patterns.find((p) => p.n === 2 && p.m === 4)!;
    expect(p24.holds).toBe(fx.model('sparse_verysparse').sparsity!.patterns[2]!.holds);
    expect(p24.saturation).toBeLessThan(0.75);
    expect(a.sparsity.kind).toBe('unstructured');
  });

  it('some fixture weights sit at offsets that are not 4-aligned, so the copy path is exercised', async () => {
    let unaligned = 0;
    for (const kind of kinds) {
      const { model } = await readOnnxModel(fx.model(`sparse_${kind}`).file);
      unaligned += model.graph.initializers.filter((t) => t.rawData && t.rawData.byteOffset % 4 !== 0).length;
    }
    expect(unaligned).toBeGreaterThan(0);
  });
});

describe('quantized and reduced-precision weights', () => {
  it('QDQ int8: quantization, parameters, zeros of the int8 weight', async () => {
    const m = fx.model('qdq');
    const a = await analyzeModel(m.file);
    expect(a.quantization).toBe('int8');
    expect(a.quantizationDetail).toMatchObject({ dtype: 'int8', style: 'qdq' });
    expect(a.parameters).toBe(m.params);
    expect(a.sparsity.perTensor.map((t) => [t.name, t.zeros])).toEqual([['Wq', m.sparsity!.per_tensor['Wq']]]);
    expect(a.sparsity.actual).toBeCloseTo(m.sparsity!.actual, 12);
    expect(a.flopsPerSample).toBeGreaterThan(0);
    expect(a.unknownShapeOps).toEqual([]);
  });

  it('QLinearConv: a weight equal to the zero point is a zero', async () => {
    const m = fx.model('qlinear');
    const a = await analyzeModel(m.file);
    expect(a.quantization).toBe('int8');
    expect(a.quantizationDetail?.style).toBe('qoperator');
    expect(a.parameters).toBe(m.params);
    expect(a.sparsity.perTensor[0]!.zeros).toBe(m.sparsity!.per_tensor['Wq']);
    expect(a.sparsity.kind).toBe(m.sparsity!.kind);
    expect(a.nodes[0]!.outputShapes).toEqual([[1, 8, 8, 8]]);
    // Integer kernels are integer OPs, counted apart from FLOPs.
    expect(a.flopsPerSample).toBe(0);
    expect(a.intOpsPerSample).toBe(2 * 8 * 8 * 8 * 4 * 3 * 3 + 8 * 8 * 8);
    expect(a.intOpsByOp).toEqual({ QLinearConv: 2 * 8 * 8 * 8 * 4 * 3 * 3 + 8 * 8 * 8 });
  });

  it('float16 weights: zeros (including -0) from the raw bits, reported as float16', async () => {
    const m = fx.model('fp16');
    const a = await analyzeModel(m.file);
    expect(a.quantization).toBe('float16');
    expect(a.parameters).toBe(m.params);
    expect(a.sparsity.perTensor[0]!.zeros).toBe(m.sparsity!.per_tensor['W']);
    expect(a.flopsPerSample).toBe(m.flops);
  });
});
