import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeModel } from '../../src/model/analyze.js';
import { formatFlops, formatModelReport } from '../../src/model/report.js';
import { makeFixtures, REPO_ROOT, type Fixtures } from './fixtures.js';

let fx: Fixtures;
beforeAll(async () => {
  fx = await makeFixtures({ big: true });
});
afterAll(async () => {
  await fx?.cleanup();
});

describe('analyzeModel', () => {
  it('fills every field for a small model', async () => {
    const m = fx.model('convnet');
    const a = await analyzeModel(m.file);
    const bytes = readFileSync(m.file);
    expect(a.path).toBe(m.file);
    expect(a.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(a.sizeBytes).toBe(statSync(m.file).size);
    expect(a.irVersion).toBe(8);
    expect(a.opset).toBe(13);
    expect(a.producer).toBe('pbh-fixtures 1');
    expect(a.outputs).toEqual([{ name: 'y', dtype: 'float32', shape: ['N', 10] }]);
    expect(a.opCensus['Conv']).toBe(3);
    expect(a.nodes.length).toBe(Object.values(a.opCensus).reduce((x, y) => x + y, 0));
    expect(a.unsupportedOps).toEqual([]);
    expect(a.flopsConvention).toMatch(/multiply-add = 2 FLOPs/);
    // The whole result is plain data: it survives JSON (pbh inspect --json).
    expect(JSON.parse(JSON.stringify(a))).toEqual(a);
  });

  it('formats a readable report', async () => {
    const a = await analyzeModel(fx.model('sparse_nm24').file);
    const text = formatModelReport(a);
    expect(text).toContain(fx.model('sparse_nm24').file);
    expect(text).toMatch(/Inputs\n\s+name\s+dtype\s+shape\n\s+x\s+float32\s+\[N, 8, 8, 8\]/);
    expect(text).toContain(`FLOPs         ${formatFlops(a.flopsPerSample!)} per sample`);
    expect(text).toContain('Sparsity      50.0% zeros over 4 weight tensor(s)');
    expect(text).toContain('2:4 structured');
    expect(text).toMatch(/Top nodes by FLOPs/);
    expect(text).toMatch(/Ops \(8 nodes\): Gemm 2, Relu 2, Conv 1/);
  });

  it('the report names ops it does not understand and says the FLOPs are a lower bound', async () => {
    const text = formatModelReport(await analyzeModel(fx.model('unknown_op').file));
    expect(text).toContain('lower bound: 2 node(s) not counted');
    expect(text).toContain('Ops PBH does not understand: com.example.Mystery');
    expect(text).toMatch(/conv2 \(Conv\): shape of input m is unknown/);
  });

  it('formats FLOPs with a readable unit', () => {
    expect(formatFlops(1.234e9)).toBe('1.23 GFLOPs');
    expect(formatFlops(8.2e12)).toBe('8.20 TFLOPs');
    expect(formatFlops(683_400)).toBe('683.40 kFLOPs');
    expect(formatFlops(12)).toBe('12 FLOPs');
  });

  it('a ~100 MB ResNet-50 with real weights analyses in well under 2 s', async () => {
    const m = fx.model('resnet50_random');
    await analyzeModel(fx.model('sparse_dense').file); // JIT warm-up on a small model
    const a = await analyzeModel(m.file);
    expect(a.sizeBytes).toBeGreaterThan(95e6);
    expect(a.parameters).toBe(m.params);
    expect(a.flopsPerSample! / 2).toBeCloseTo(4.1e9, -8);
    expect(a.sparsity.kind).toBe('unstructured');
    expect(a.sparsity.actual).toBeGreaterThan(0.29);
    expect(a.sparsity.actual).toBeLessThan(0.31);
    expect(a.analysisMs).toBeLessThan(2000);
  });
});

describe('the bundled suite (python/generate_suite.py)', () => {
  const dir = join(REPO_ROOT, '.cache/suite/models');
  const manifestPath = join(REPO_ROOT, '.cache/suite/manifest.json');
  const present = existsSync(manifestPath);

  it.skipIf(!present)('sparsity, N:M and parameters agree with the generator manifest', async () => {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
      models: { name: string; path: string; parameters: number; sparsity: { kind: string; n: number | null; m: number | null; actual: number; nm_pattern_holds: boolean | null } }[];
    };
    const digits = manifest.models.filter((x) => x.name.startsWith('digits_'));
    expect(digits.map((x) => x.name)).toEqual(
      expect.arrayContaining(['digits_cnn', 'digits_cnn_sparse50', 'digits_cnn_sparse80', 'digits_cnn_2of4']),
    );
    for (const entry of digits) {
      const a = await analyzeModel(join(REPO_ROOT, '.cache/suite', entry.path));
      const s = entry.sparsity;
      expect({ name: entry.name, kind: a.sparsity.kind, n: a.sparsity.n, m: a.sparsity.m, holds: a.sparsity.nmPatternHolds }).toEqual({
        name: entry.name,
        kind: s.kind,
        n: s.n,
        m: s.m,
        holds: s.nm_pattern_holds,
      });
      expect(a.sparsity.actual).toBeCloseTo(s.actual, 4);
      expect(a.unknownShapeOps).toEqual([]);
      expect(a.parameters).toBe(entry.parameters);
    }
  });

  it.skipIf(!present)('resnet50 and squeezenet from the suite', async () => {
    const r = await analyzeModel(join(dir, 'resnet50.onnx'));
    expect(r.flopsPerSample! / 2).toBeCloseTo(4.1e9, -8);
    expect(r.inputs[0]!.shape).toEqual(['N', 3, 224, 224]);
    expect(r.analysisMs).toBeLessThan(2000);
    const s = await analyzeModel(join(dir, 'squeezenet.onnx'));
    expect(s.flopsPerSample! / 2).toBeGreaterThan(0.34e9);
    expect(s.flopsPerSample! / 2).toBeLessThan(0.36e9);
  });
});
