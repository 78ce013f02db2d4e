import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeModel } from '../../src/model/index.js';
import { PYTHON, REPO_ROOT } from './fixtures.js';

// test/fixtures/make_formats.py's state_if.onnx: x [batch, 4], state [2, batch, 3], sr int64 []; y = If(sr == 16000,
// then 2x + x, else x); stateN = state + 1.
let dir = '';
let file = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pbh-control-flow-'));
  execFileSync(PYTHON, [join(REPO_ROOT, 'test', 'fixtures', 'make_formats.py'), dir]);
  file = join(dir, 'state_if.onnx');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('FLOPs of If branches at given input shapes and values', () => {
  it('counts the branch a known condition takes, at the shapes given, divided by the given batch', async () => {
    const a = await analyzeModel(file, { inputs: { x: { shape: [2, 4] }, state: { shape: [2, 2, 3] }, sr: { shape: [], values: [16000] } }, batch: 2 });
    expect(a.flopsLowerBound).toBe(false);
    expect(a.flopsPerSample).toBe((2 * 2 * 4 + 2 * 2 * 3 + 1) / 2);
    expect(a.flopsNotes).toEqual(['If_2: counted the then branch, the one its condition takes at these inputs']);
    expect(a.countedAt).toEqual({ x: [2, 4], state: [2, 2, 3], sr: [] });
    const other = await analyzeModel(file, { inputs: { x: { shape: [2, 4] }, state: { shape: [2, 2, 3] }, sr: { shape: [], values: [8000] } }, batch: 2 });
    expect(other.flopsNotes).toEqual(['If_2: counted the else branch, the one its condition takes at these inputs']);
    expect(other.flopsPerSample).toBe((2 * 2 * 3 + 1) / 2);
  });

  it('counts the costlier branch when the condition is not known, and says so', async () => {
    const a = await analyzeModel(file, { inputs: { x: { shape: [1, 4] }, state: { shape: [2, 1, 3] }, sr: { shape: [] } }, batch: 1 });
    expect(a.flopsPerSample).toBe(2 * 4 + 2 * 3 + 1);
    expect(a.flopsNotes[0]).toMatch(/If_2: its condition is not known statically; counted the costlier branch \(then\)/);
  });

  it('from the file alone, binds the state\'s batch symbol (axis 1) to the batch of the first input', async () => {
    const a = await analyzeModel(file);
    expect(a.unboundDims).toEqual([]);
    expect(a.batchSize).toBe(1);
  });
});
