import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig, writeNpy } from './helpers.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

let dir: string;
const digits = (limit = 32) => ({ kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit });
const base = {
  engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }],
  warmup_batches: 1,
  sessions: 1,
};
const cnn = { name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' };

type Row = { model_name: string; batch_size: number; status: string; error: string | null };
const statuses = (db: string): Promise<Row[]> =>
  queryJson<Row>(db, 'SELECT model_name, batch_size, status, error FROM profiles ORDER BY model_name, batch_size');

beforeAll(async () => {
  dir = await tempDir('pbh-bad-');
});

describe('bad input becomes clear errors and failed Profiles while the sweep goes on', () => {
  it('config typo: exit 2 with a did-you-mean, nothing run', async () => {
    const config = await writeConfig(dir, 'typo.yaml', { name: 't', dataset: digits(), models: [cnn], ...base, batch_size: [8] });
    const r = await pbh(['run', config, '--db', path.join(dir, 'typo.duckdb')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/typo\.yaml/);
    expect(r.stderr).toMatch(/unknown key "batch_size" \(did you mean "batch_sizes"\?\)/);
  });

  it('missing model, non-ONNX file, unknown engine and bad batch sizes fail per cell; good cells are measured', async () => {
    const notOnnx = path.join(dir, 'notes.onnx');
    await writeFile(notOnnx, 'this is a text file, not a model\n');
    const db = path.join(dir, 'cells.duckdb');
    const config = await writeConfig(dir, 'cells.yaml', {
      name: 'cells',
      dataset: digits(),
      models: [cnn, { name: 'ghost', path: 'models/does-not-exist.onnx' }, { name: 'notes', path: notOnnx }, { name: 'folder', path: dir }],
      ...base,
      batch_sizes: [0, -4, 8],
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code).toBe(1);
    const rows = await statuses(db);
    expect(rows).toHaveLength(12);
    const find = (m: string, b: number) => rows.find((x) => x.model_name === m && x.batch_size === b)!;
    expect(find('digits_cnn', 8).status).toBe('ok');
    expect(find('digits_cnn', 0)).toMatchObject({ status: 'failed', error: expect.stringMatching(/batch_sizes: 0 is not a valid batch size/) });
    expect(find('digits_cnn', -4).error).toMatch(/batch_sizes: -4/);
    expect(find('ghost', 8)).toMatchObject({ status: 'failed', error: expect.stringMatching(/model "ghost": file .*does-not-exist\.onnx does not exist/) });
    expect(find('notes', 8)).toMatchObject({ status: 'failed', error: expect.stringMatching(/notes\.onnx is not an ONNX model/) });
    expect(find('folder', 8).error).toMatch(/model "folder": .* is a directory, not an ONNX file\. Point models\[\]\.path at the \.onnx file itself/);

    const unknown = await writeConfig(dir, 'engine.yaml', { name: 'e', dataset: digits(), models: [cnn], ...base, engines: [{ name: 'onnxruntme' }], batch_sizes: [8] });
    const u = await pbh(['run', unknown, '--db', db]);
    expect(u.code).toBe(1);
    const last = await queryJson<{ error: string }>(db, "SELECT error FROM profiles WHERE engine_name = 'onnxruntme'");
    expect(last[0]!.error).toMatch(/unknown engine "onnxruntme" \(did you mean "onnxruntime"\?\)\. Installed engines: .*onnxruntime/);
  });

  it('dataset shape and dtype that do not fit the model say what to change', async () => {
    const db = path.join(dir, 'fit.duckdb');
    const images = { kind: 'image-folder', root: suiteData('digits'), labels: 'labels.csv', limit: 16 };
    const noLayout = await writeConfig(dir, 'layout.yaml', { name: 'layout', dataset: images, preprocess: [{ scale: 1 / 255 }], models: [cnn], ...base, batch_sizes: [8] });
    expect((await pbh(['run', noLayout, '--db', db])).code).toBe(1);
    const wrongType = await writeConfig(dir, 'dtype.yaml', { name: 'dtype', dataset: images, preprocess: [{ layout: 'NCHW' }, { dtype: 'int32' }], models: [cnn], ...base, batch_sizes: [8] });
    expect((await pbh(['run', wrongType, '--db', db])).code).toBe(1);
    const rows = await queryJson<{ error: string }>(db, 'SELECT error FROM profiles ORDER BY created_at');
    expect(rows[0]!.error).toMatch(/field "image" after preprocess \(scale .*\) has shape \[8, 8, 8, 1\] but model "digits_cnn" input "input" takes \[N, 1, 8, 8\].*add \{layout: NCHW\}/);
    expect(rows[1]!.error).toMatch(/dtype int32 but model "digits_cnn" input "input" takes float32/);
  });

  it('labels that do not match the samples, and an empty dataset, fail every cell with the file named', async () => {
    const db = path.join(dir, 'data.duckdb');
    const fewLabels = path.join(dir, 'few_labels.npy');
    await writeNpy(fewLabels, '<i8', [5], [0, 1, 2, 3, 4]);
    const mismatch = await writeConfig(dir, 'labels.yaml', {
      name: 'labels', dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: fewLabels }, models: [cnn], ...base, batch_sizes: [8],
    });
    expect((await pbh(['run', mismatch, '--db', db])).code).toBe(1);
    const emptyRoot = path.join(dir, 'empty-images');
    await mkdir(emptyRoot, { recursive: true });
    await writeFile(path.join(emptyRoot, 'labels.csv'), 'file,label\n');
    const empty = await writeConfig(dir, 'empty.yaml', {
      name: 'empty', dataset: { kind: 'image-folder', root: emptyRoot, labels: 'labels.csv' }, models: [cnn], ...base, batch_sizes: [8],
    });
    expect((await pbh(['run', empty, '--db', db])).code).toBe(1);
    const rows = await queryJson<{ error: string; status: string }>(db, 'SELECT status, error FROM profiles ORDER BY created_at');
    expect(rows[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/few_labels\.npy: 5 labels for 1797|few_labels\.npy: 5 labels for \d+ samples/) });
    expect(rows[1]).toMatchObject({ status: 'failed', error: expect.stringMatching(/is empty: .*labels\.csv lists no images/) });
  });

  it('a cell past its timeout is stored as timeout and the next cell runs', async () => {
    const db = path.join(dir, 'timeout.duckdb');
    const config = await writeConfig(dir, 'timeout.yaml', {
      name: 'timeout',
      dataset: { kind: 'npy', inputs: { input: suiteData('vision_x.npy') }, limit: 8 },
      models: [{ name: 'resnet50', path: suiteModel('resnet50'), weights: 'random' }, { name: 'squeezenet', path: suiteModel('squeezenet'), weights: 'random' }],
      ...base,
      sessions: 200,
      batch_sizes: [1],
      timeout_s: 2,
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const rows = await statuses(db);
    expect(rows.map((x) => x.status), r.stdout + r.stderr).toEqual(['timeout', 'timeout']);
    expect(rows[0]!.error).toMatch(/ran past its timeout of 2 s/);
  });

  it('a database locked by another process is a clear error naming the file (exit 3)', async () => {
    const db = path.join(dir, 'locked.duckdb');
    const holder = spawn(
      process.execPath,
      // It says "held" once a garbage collection has run: it keeps its lock through one (see the fixture).
      ['--expose-gc', path.join(ROOT, 'test', 'fixtures', 'hold-database.mjs'), db, 'CREATE TABLE t(x INT)'],
      { cwd: ROOT },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
        holder.on('exit', (c) => reject(new Error(`holder exited ${c}`)));
      });
      const config = await writeConfig(dir, 'lock.yaml', { name: 'lock', dataset: digits(), models: [cnn], ...base, batch_sizes: [8] });
      const r = await pbh(['run', config, '--db', db]);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(db);
      expect(r.stderr).toMatch(/another process|locked/i);
      const q = await pbh(['query', 'SELECT 1', '--db', db]);
      expect(q.code).toBe(3);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a run waits out a reader that holds the database for a moment (pbh sweep status reading a shard)', async () => {
    const db = path.join(dir, 'briefly.duckdb');
    const config = await writeConfig(dir, 'briefly.yaml', { name: 'briefly', dataset: digits(), models: [cnn], ...base, batch_sizes: [8] });
    expect((await pbh(['run', config, '--db', db])).code).toBe(0);
    // A reader that lets go after 3 s (within the run's 5 s wait, longer than its start), as sweep status lets go of a shard.
    const holder = spawn(
      process.execPath,
      ['--input-type=module', '-e', `import {DuckDBInstance} from '@duckdb/node-api'; const i = await DuckDBInstance.create(${JSON.stringify(db)}, { access_mode: 'READ_ONLY' }); await (await i.connect()).run('SELECT 1'); console.log('held'); setTimeout(() => { i.closeSync(); process.exit(0); }, 3000);`],
      { cwd: ROOT },
    );
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
      holder.on('exit', (c) => c !== 0 && reject(new Error(`holder exited ${c}`)));
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code, r.stderr).toBe(0);
    expect((await statuses(db)).map((x) => x.status)).toEqual(['ok', 'ok']);
  });

  it('Ctrl-C keeps every Profile already written and exits 130', async () => {
    const db = path.join(dir, 'sigint.duckdb');
    const config = await writeConfig(dir, 'sigint.yaml', {
      name: 'sigint',
      dataset: digits(256),
      models: [cnn, { ...cnn, name: 'digits_cnn_b' }, { ...cnn, name: 'digits_cnn_c' }],
      ...base,
      sessions: 150,
      batch_sizes: [1],
    });
    let sent = false;
    const r = await pbh(['run', config, '--db', db], {
      onStderr: (text, child) => {
        if (!sent && text.includes('[2/3]')) {
          sent = true;
          child.kill('SIGINT');
        }
      },
    });
    expect(sent).toBe(true);
    expect(r.code).toBe(130);
    const rows = await statuses(db);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.length).toBeLessThan(3);
    expect(rows.find((x) => x.model_name === 'digits_cnn')!.status).toBe('ok');
    const interrupted = rows.find((x) => x.model_name !== 'digits_cnn');
    expect(interrupted).toMatchObject({ status: 'failed', error: expect.stringMatching(/interrupted by the user/) });
  });
});
