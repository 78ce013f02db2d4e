import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { suiteData, suiteModel } from './suite.js';

let dir: string;
let db: string;

const digitsNpy = { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 64 };

beforeAll(async () => {
  dir = await tempDir();
  db = path.join(dir, 'results', 'pbh.duckdb');
});

describe('pbh run, end to end on ONNX Runtime', () => {
  it('measures, scores and stores Profiles a user can query', async () => {
    const config = await writeConfig(dir, 'digits.yaml', {
      name: 'e2e',
      dataset: digitsNpy,
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), family: 'cnn', framework: 'numpy', weights: 'trained' }],
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }],
      batch_sizes: [1, 16],
      warmup_batches: 2,
      sessions: 2,
      // Two sessions exactly, whatever their interval, as the counts below expect.
      rounds: { max_sessions: 2 },
      scorers: ['top1', 'top5', 'agreement'],
      // One pass over the resident batches per session, as the counts below expect.
      scenario: { kind: 'single_stream', min_query_count: 1 },
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.stderr).not.toMatch(/Error:/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/digits_cnn\s+onnxruntime\s+fp32\s+16\s+single_stream (VALID|INVALID) \(MLPerf: INVALID\)\s+ok/);
    expect(existsSync(db)).toBe(true);

    const rows = await queryJson<{ batch_size: number; throughput_sps: number; p50_ms: number; top1: number; overhead_p50_ms: number }>(
      db,
      'SELECT batch_size, throughput_sps, p50_ms, top1, overhead_p50_ms FROM leaderboard ORDER BY batch_size',
    );
    expect(rows.map((x) => x.batch_size)).toEqual([1, 16]);
    for (const row of rows) {
      expect(row.throughput_sps).toBeGreaterThan(100);
      expect(row.top1).toBeGreaterThan(0.9);
      expect(row.overhead_p50_ms).toBeGreaterThanOrEqual(0);
    }
    const samples = await queryJson<{ boundary: string; n: number }>(
      db,
      "SELECT s.boundary, count(*)::INTEGER AS n FROM samples s JOIN profiles p USING (profile_id) WHERE p.batch_size = 16 GROUP BY ALL ORDER BY 1",
    );
    // Every query of both sessions at the engine boundary; the transport probe after them (every one of the 4
    // resident batches, and on to 32 queries) at predict, transport and end_to_end: raw latencies are all kept.
    const [timed] = await queryJson<{ n: number }>(db, 'SELECT sum(s.batches)::INTEGER AS n FROM sessions s JOIN profiles p USING (profile_id) WHERE p.batch_size = 16');
    expect(timed!.n).toBeGreaterThanOrEqual(8);
    expect(samples).toEqual([
      { boundary: 'end_to_end', n: 32 },
      { boundary: 'engine', n: timed!.n },
      { boundary: 'predict', n: 32 },
      { boundary: 'transport', n: 32 },
    ]);
    const layers = await queryJson<{ n: number }>(db, 'SELECT count(*)::INTEGER AS n FROM layers');
    expect(layers[0]!.n).toBeGreaterThan(4);
    const sessions = await queryJson<{ n: number }>(db, 'SELECT count(*)::INTEGER AS n FROM sessions');
    expect(sessions[0]!.n).toBe(4);
    const full = await queryJson<{ flops: number; peak_fraction: number; command: string; agreement: number }>(
      db,
      "SELECT m.flops_per_sample AS flops, p.peak_fraction, p.command, (SELECT value FROM scores s WHERE s.profile_id = p.profile_id AND metric = 'agreement') AS agreement FROM profiles p JOIN models m USING (model_sha256) LIMIT 1",
    );
    expect(full[0]!.flops).toBeGreaterThan(100_000);
    expect(full[0]!.peak_fraction).toBeGreaterThan(0);
    expect(full[0]!.peak_fraction).toBeLessThan(1);
    expect(full[0]!.agreement).toBe(1);
    expect(full[0]!.command).toMatch(/^npx pbh run .*digits\.yaml --db .* --only [0-9a-f]{16}$/);

    const resumed = await pbh(['run', config, '--db', db, '--resume']);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/2 already stored \(--resume\)/);
    const count = await queryJson<{ n: number }>(db, 'SELECT count(*)::INTEGER AS n FROM profiles');
    expect(count[0]!.n).toBe(2);

    // A key that names no cell (a config that drifted, a typo) is refused before any run is written.
    const runsBefore = await queryJson<{ n: number }>(db, 'SELECT count(*)::INTEGER AS n FROM runs');
    const stale = await pbh(['run', config, '--db', db, '--only', 'feedfacefeedface']);
    expect(stale.code).toBe(2);
    expect(stale.stderr).toMatch(/--only feedfacefeedface: no cell of .*digits\.yaml has that key \(it has 2 cells\)/);
    const runsAfter = await queryJson<{ n: number }>(db, 'SELECT count(*)::INTEGER AS n FROM runs');
    expect(runsAfter[0]!.n).toBe(runsBefore[0]!.n);
  });

  it('resumes only cells that are the same: a changed setting, model file or dataset runs again, saying why', async () => {
    const work = await tempDir('pbh-resume-');
    const resumeDb = path.join(work, 'r.duckdb');
    const model = path.join(work, 'm.onnx');
    copyFileSync(suiteModel('digits_cnn'), model);
    const features = path.join(work, 'x.npy');
    copyFileSync(suiteData('digits_x.npy'), features);
    const base = {
      name: 'resume',
      dataset: { ...digitsNpy, inputs: { input: features } },
      models: [{ name: 'm', path: model, weights: 'trained' }],
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }],
      batch_sizes: [8],
      warmup_batches: 1,
      sessions: 1,
      scorers: ['top1'],
    };
    const config = await writeConfig(work, 'r.yaml', base);
    expect((await pbh(['run', config, '--db', resumeDb])).code).toBe(0);
    const same = await pbh(['run', config, '--db', resumeDb, '--resume']);
    expect(same.stdout).toMatch(/1 already stored \(--resume\)/);

    await writeConfig(work, 'r.yaml', { ...base, scorers: ['top1', 'top5'] });
    const rescored = await pbh(['run', config, '--db', resumeDb, '--resume']);
    expect(rescored.code).toBe(0);
    expect(rescored.stdout).toMatch(/m x onnxruntime x b8: its configuration changed/);
    expect(rescored.stdout).toMatch(/1 stored but changed, so run again \(--resume\)/);

    copyFileSync(suiteModel('digits_cnn_sparse50'), model);
    const swapped = await pbh(['run', config, '--db', resumeDb, '--resume']);
    expect(swapped.stdout).toMatch(/the model file changed \(sha256 [0-9a-f]{12} -> [0-9a-f]{12}\)/);

    // The same shape, other pixels: the last byte of the last image.
    const bytes = readFileSync(features);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0x40, bytes.length - 1);
    writeFileSync(features, bytes);
    const redrawn = await pbh(['run', config, '--db', resumeDb, '--resume']);
    expect(redrawn.stdout).toMatch(/the dataset's files changed \(manifest [0-9a-f]{12} -> [0-9a-f]{12}\)/);
    const count = await queryJson<{ n: number }>(resumeDb, 'SELECT count(*)::INTEGER AS n FROM profiles');
    expect(count[0]!.n).toBe(4);
  });

  it('prints tables, CSV and JSON, and refuses writes', async () => {
    const csv = await pbh(['query', 'SELECT engine, batch_size FROM leaderboard ORDER BY batch_size', '--db', db, '--format', 'csv']);
    expect(csv.stdout.trim().split(/\r?\n/)).toEqual(['engine,batch_size', 'onnxruntime,1', 'onnxruntime,16']);
    const table = await pbh(['query', 'SELECT engine FROM leaderboard LIMIT 1', '--db', db]);
    expect(table.stdout).toMatch(/engine[\s\S]*onnxruntime/);
    const write = await pbh(['query', 'DELETE FROM profiles', '--db', db]);
    expect(write.code).not.toBe(0);
    expect(write.stderr).toMatch(/read-only/i);
  });

  it('exports Parquet that DuckDB reads back', async () => {
    const out = path.join(dir, 'export');
    const r = await pbh(['export', '--db', db, '--format', 'parquet', '--out', out]);
    expect(r.code).toBe(0);
    expect(existsSync(path.join(out, 'profiles.parquet'))).toBe(true);
    // pbh query reads files outside the database only when told to.
    const sql = `SELECT count(*)::INTEGER AS n FROM read_parquet('${path.join(out, 'leaderboard.parquet')}')`;
    const back = await pbh(['query', sql, '--db', db, '--format', 'json', '--allow-local-files']);
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toEqual([{ n: 2 }]);
    // Again into the folder it wrote, in another format: fine. A folder holding someone else's file, or a file: refused.
    expect((await pbh(['export', '--db', db, '--format', 'csv', '--out', out])).code).toBe(0);
    expect((await pbh(['export', '--db', db, '--format', 'parquet', '--out', out])).code).toBe(0);
    writeFileSync(path.join(out, 'notes.txt'), 'mine');
    const foreign = await pbh(['export', '--db', db, '--format', 'csv', '--out', out]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toMatch(/holds files pbh export did not write \(notes\.txt\)/);
    expect(readFileSync(path.join(out, 'notes.txt'), 'utf8')).toBe('mine');
    const onFile = await pbh(['export', '--db', db, '--format', 'csv', '--out', path.join(out, 'notes.txt')]);
    expect(onFile.code).toBe(2);
    expect(onFile.stderr).toMatch(/notes\.txt is a file, not a folder/);
  });
});

describe('pbh commands', () => {
  it('has --help on every command and a usage exit code', async () => {
    for (const cmd of ['run', 'engines', 'inspect', 'query', 'export', 'schema', 'doctor']) {
      const r = await pbh([cmd, '--help']);
      expect(r.code, cmd).toBe(0);
      expect(r.stdout, cmd).toMatch(/^Usage: pbh /);
    }
    const bad = await pbh(['frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown command "frobnicate"/);
    const noArg = await pbh(['run']);
    expect(noArg.code).toBe(2);
  });

  it('lists engines with versions, and inspects a model', async () => {
    const engines = await pbh(['engines', '--json']);
    const parsed = JSON.parse(engines.stdout) as { engines: { name: string; process: string; availability: { available: boolean; version?: string } }[] };
    // ONNX Runtime is probed through both doors, at one version.
    const ort = parsed.engines.filter((e) => e.name === 'onnxruntime');
    expect(ort.map((e) => e.process)).toEqual(['worker', 'harness']);
    for (const e of ort) expect(e.availability).toMatchObject({ available: true, version: expect.stringMatching(/^1\.30/) });
    const inspect = await pbh(['inspect', suiteModel('digits_cnn_2of4'), '--json']);
    expect(inspect.code).toBe(0);
    const facts = JSON.parse(inspect.stdout) as { opset: number; parameters: number; sparsity: { kind: string; n: number; m: number } };
    expect(facts.sparsity).toMatchObject({ kind: 'n_m', n: 2, m: 4 });
    const notOnnx = await pbh(['inspect', suiteData('digits.csv')]);
    expect(notOnnx.code).toBe(2);
    expect(notOnnx.stderr).toMatch(/digits\.csv is not an ONNX model/);
  });

  it('prints the JSON Schema that the committed schema file holds', async () => {
    const r = await pbh(['schema']);
    const { readFile } = await import('node:fs/promises');
    const committed = await readFile(path.resolve(import.meta.dirname, '..', 'schema', 'experiment.schema.json'), 'utf8');
    expect(r.stdout).toBe(committed);
    const manifest = await pbh(['schema', '--manifest']);
    expect(manifest.stdout).toBe(await readFile(path.resolve(import.meta.dirname, '..', 'schema', 'engine-manifest.schema.json'), 'utf8'));
  });
});
