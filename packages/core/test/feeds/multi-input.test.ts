import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ExperimentInput } from '../../src/config/schema.js';
import { runCell } from '../../src/harness/cell.js';
import { Deadline } from '../../src/harness/deadline.js';
import { fakeEngine } from '../harness/fake-engine.js';
import { fakeSweep } from '../harness/sweep-context.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..');
const N = 20;

/** A .npy file (format 1.0) of a C-order array. */
function writeNpy(file: string, descr: string, shape: number[], data: ArrayBufferView): void {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix.writeUInt8(1, 6);
  prefix.writeUInt16LE(header.length, 8);
  writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

let dir = '';
let model = '';

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pbh-multi-input-'));
  // mixed_io.onnx: inputs a float32 [N,3] and b int32 [N,3].
  model = execFileSync(path.join(ROOT, '.venv', 'bin', 'python'), [path.join(ROOT, 'test', 'fixtures', 'make_models.py'), dir], { encoding: 'utf8' })
    .split('\n')
    .find((l) => l.endsWith('mixed_io.onnx'))!;
  writeNpy(path.join(dir, 'a.npy'), '<f4', [N, 3], Float32Array.from({ length: N * 3 }, (_, i) => i / 10));
  writeNpy(path.join(dir, 'b.npy'), '<i4', [N, 3], Int32Array.from({ length: N * 3 }, (_, i) => i % 7));
  writeNpy(path.join(dir, 'b64.npy'), '<i8', [N, 3], BigInt64Array.from({ length: N * 3 }, (_, i) => BigInt(i % 7)));
  writeNpy(path.join(dir, 'flat.npy'), '<i4', [N], Int32Array.from({ length: N }, () => 1));
});

async function runWith(inputs: Record<string, string>, modelEntry: Partial<NonNullable<ExperimentInput['models']>[number]> = {}) {
  const engine = fakeEngine('fake');
  const { ctx, cells } = await fakeSweep([fakeEngine('ref'), engine], {
    dataset: { kind: 'npy', name: 'pairs', inputs: Object.fromEntries(Object.entries(inputs).map(([k, f]) => [k, path.join(dir, f)])) },
    models: [{ name: 'mixed', path: model, ...modelEntry }],
    scorers: [],
    batch_sizes: [4],
  });
  const profile = await runCell(ctx, cells.find((c) => c.engine.name === 'fake')!, new Deadline(30, 'multi-input'));
  await ctx.reference.release();
  return { profile, engine };
}

describe('every model input is fed', () => {
  it('from the dataset field of the same name, each in its own dtype', async () => {
    const { profile, engine } = await runWith({ a: 'a.npy', b: 'b.npy' });
    expect(profile.status, profile.error ?? '').toBe('ok');
    const feeds = engine.calls.lastFeeds!;
    expect(Object.keys(feeds).sort()).toEqual(['a', 'b']);
    expect(feeds.b!.dtype).toBe('int32');
    expect(feeds.a!.dims).toEqual([4, 3]);
    expect(engine.calls.prepares[0]!.inputs.map((i) => [i.name, i.shape])).toEqual([['a', [4, 3]], ['b', [4, 3]]]);
  });

  it('through an explicit mapping where names differ', async () => {
    const { profile, engine } = await runWith({ features: 'a.npy', ids: 'b.npy' }, { inputs: { a: 'features', b: 'ids' } });
    expect(profile.status, profile.error ?? '').toBe('ok');
    expect(engine.calls.lastFeeds!.b!.dtype).toBe('int32');
  });

  it('fails the cell, naming model, input and dataset fields, when an input has no data', async () => {
    const { profile } = await runWith({ a: 'a.npy', c: 'b.npy' });
    expect(profile.status).toBe('failed');
    expect(profile.error).toMatch(/model "mixed" input "b" \(int32 \[N, 3\]\) has no data: dataset pairs has fields a, c\. .*models\[mixed\]\.inputs\.b: FIELD \(a dataset field\), \{ constant: VALUE, dtype: int32 \}.*\{ zeros: true \}/);
  });

  it('fails on a mapping to a field that does not exist, or from an input that does not exist', async () => {
    const missing = await runWith({ a: 'a.npy', b: 'b.npy' }, { inputs: { b: 'ids' } });
    expect(missing.profile.error).toMatch(/models\[mixed\]\.inputs\.b maps input "b" to dataset field "ids", which dataset pairs does not have; its fields are a, b/);
    const unknown = await runWith({ a: 'a.npy', b: 'b.npy' }, { inputs: { q: 'a' } });
    expect(unknown.profile.error).toMatch(/models\[mixed\]\.inputs names "q", which is not an input of the model; its inputs are a, b/);
  });

  it('fails on the wrong dtype or rank, naming the field and the input', async () => {
    const dtype = await runWith({ a: 'a.npy', b: 'b64.npy' });
    expect(dtype.profile.status).toBe('failed');
    expect(dtype.profile.error).toMatch(/dataset pairs field "b" \(fed as stored\) has dtype int64 but model "mixed" input "b" takes int32/);
    const rank = await runWith({ a: 'a.npy', b: 'flat.npy' });
    expect(rank.profile.error).toMatch(/field "b" \(fed as stored\) has shape \[4\] but model "mixed" input "b" takes \[N, 3\].*number of axes differs/);
  });
});
