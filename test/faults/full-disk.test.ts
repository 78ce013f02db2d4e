// Fault suite, a full disk (issue 41, defect 2): no measured Profile is lost, none is reported ok that is not stored,
// no empty file is left, the disk is named with the fix (exit 3), and no run leaves its scratch folder behind.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from '../helpers.js';
import { suiteData, suiteModel } from '../suite.js';

/** Every file under `dir`, with its size. */
function files(dir: string): { file: string; size: number }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath, e.name);
      return { file, size: statSync(file).size };
    });
}

let work: string;
let disk: string;
let tmp: string;

beforeAll(async () => {
  work = await tempDir('pbh-full-disk-');
  disk = path.join(work, 'disk');
  tmp = path.join(work, 'tmp');
  mkdirSync(disk);
  mkdirSync(tmp);
  // A disk that one Profile fills: a tmpfs of 2 MiB (root mounts it, as .ci/run and npm test run here).
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', disk]);
});

afterAll(() => {
  if (disk) execFileSync('umount', ['-l', disk]);
});

describe('a full disk', () => {
  it('loses no Profile, leaves no empty file, and names the disk with the fix (exit 3)', async () => {
    const db = path.join(disk, 'pbh.duckdb');
    const config = await writeConfig(work, 'c.yaml', {
      name: 'full-disk',
      dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 64 },
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }],
      batch_sizes: [8],
      warmup_batches: 1,
      sessions: 2,
    });
    let measured = 0;
    for (let i = 0; i < 3; i++) {
      const r = await pbh(['run', config, '--db', db], { env: { TMPDIR: tmp } });
      expect([0, 1, 3], r.stderr).toContain(r.code);
      if (r.code !== 0) expect(r.stderr).toMatch(/the disk holding .*pbh\.duckdb is full.*free space/s);
      expect(r.stderr, 'a crash, not a message').not.toMatch(/^pbh: FATAL/m);
      if (/^run [0-9a-f-]+: /m.test(r.stdout)) measured += 1;
    }
    expect(measured).toBeGreaterThan(0);
    // Each run removed its scratch folder (pbh-<run id>), full disk or not; a Profile kept in TMPDIR is in pbh-unstored-*.
    expect(readdirSync(tmp).filter((name) => /^pbh-[0-9a-f]{8}-/.test(name)), 'scratch left in TMPDIR').toEqual([]);
    // Kept Profiles are whole JSON files, beside the database or (that disk full) in TMPDIR.
    const kept = [...files(disk), ...files(tmp)].filter((f) => f.file.endsWith('.json'));
    for (const f of [...files(disk), ...kept]) expect(f.size, f.file).toBeGreaterThan(0);
    // Room again: the write-ahead log folds into the file on the next open, and every measured Profile is somewhere.
    execFileSync('mount', ['-o', 'remount,size=64m', disk]);
    const [stored] = await queryJson<{ n: number }>(db, 'SELECT count(*)::INTEGER AS n FROM profiles');
    expect(stored!.n + kept.length).toBe(measured);
  });
});
