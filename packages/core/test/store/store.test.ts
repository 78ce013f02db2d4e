import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  ReadOnlyStoreError,
  StoreLockedError,
  StoreNotFoundError,
  StoreWriteError,
  openStore,
  runQuery,
  type ProfileStore,
} from '../../src/store/index.js';
import { makeProfile, runStart, tempDir } from './profile-fixture.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../../..');

let dir: string;
let cleanup: () => void;
const opened: ProfileStore[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  cleanup();
});

async function open(file: string, readOnly = false): Promise<ProfileStore> {
  const store = await openStore(file, { readOnly });
  opened.push(store);
  return store;
}

async function closeAll(): Promise<void> {
  for (const store of opened.splice(0)) await store.close();
}

async function count(store: ProfileStore, sql: string): Promise<number> {
  return store.withConnection(async (connection) => Number((await connection.runAndReadAll(sql)).getRows()[0]?.[0]));
}

describe('ProfileStore', () => {
  it('round-trips a realistic Profile with 50k raw samples, written in well under a few seconds', async () => {
    const store = await open(join(dir, 'nested', 'dirs', 'pbh.duckdb'));
    await store.beginRun(runStart('run-1'));
    const profile = makeProfile({ profileId: 'p-1', runId: 'run-1' });
    expect(profile.samples).toHaveLength(50_000);

    const started = performance.now();
    await store.writeProfile(profile);
    const writeMs = performance.now() - started;
    console.info(`writeProfile with ${profile.samples.length} samples: ${writeMs.toFixed(0)} ms`);
    // Loose enough for a loaded 2-core machine; one INSERT per sample takes well over 10 s here.
    expect(writeMs).toBeLessThan(4000);

    const readStarted = performance.now();
    const back = await store.getProfile('p-1');
    console.info(`getProfile with ${profile.samples.length} samples: ${(performance.now() - readStarted).toFixed(0)} ms`);
    expect(back).toEqual(profile);
    expect(await store.getProfile('absent')).toBeUndefined();

    expect(await count(store, `SELECT count(*) FROM samples WHERE profile_id = 'p-1'`)).toBe(50_000);
    expect(await count(store, `SELECT count(*) FROM sessions WHERE profile_id = 'p-1'`)).toBe(5);
    expect(await count(store, `SELECT count(*) FROM layers WHERE profile_id = 'p-1'`)).toBe(3);
    expect(await count(store, `SELECT count(*) FROM scores WHERE profile_id = 'p-1'`)).toBe(2);
    expect(await count(store, 'SELECT count(*) FROM systems')).toBe(1);
    expect(await count(store, 'SELECT count(*) FROM models')).toBe(1);

    const flat = await store.withConnection(async (connection) =>
      (
        await connection.runAndReadAll(
          `SELECT throughput_mean, predict_p50_ms, engine_p99_ms, top1, peak_rss_mb, cpu_time_ms, session_count
           FROM profiles WHERE profile_id = 'p-1'`,
        )
      ).getRowObjectsJS()[0],
    );
    expect(flat).toEqual({
      throughput_mean: profile.throughput?.mean,
      predict_p50_ms: (profile.latency.predict?.p50 ?? Number.NaN) / 1e6,
      engine_p99_ms: (profile.latency.engine?.p99 ?? Number.NaN) / 1e6,
      top1: 0.9712,
      peak_rss_mb: 184.25,
      cpu_time_ms: 1234.5,
      session_count: 5,
    });

    await store.finishRun('run-1', '2026-03-01T11:00:00.000Z');
    await expect(store.finishRun('nope')).rejects.toThrow(/run nope is not in/);
  });

  it('round-trips a failed Profile that has no model facts and no measurements', async () => {
    const store = await open(join(dir, 'pbh.duckdb'));
    await store.beginRun(runStart('run-1'));
    const failed = { ...makeProfile({ profileId: 'p-failed', runId: 'run-1', status: 'failed', layers: [] }), model: null };
    await store.writeProfile(failed);
    expect(await store.getProfile('p-failed')).toEqual(failed);
    const flat = await store.withConnection(async (connection) =>
      (
        await connection.runAndReadAll(
          `SELECT model_sha256, throughput_mean, predict_p50_ms, error FROM profiles WHERE profile_id = 'p-failed'`,
        )
      ).getRowObjectsJS()[0],
    );
    expect(flat).toEqual({ model_sha256: null, throughput_mean: null, predict_p50_ms: null, error: failed.error });
  });

  it('creates the schema once: reopening applies no migration twice and records the version', async () => {
    const file = join(dir, 'pbh.duckdb');
    const first = await open(file);
    expect(await first.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    await closeAll();
    const again = await open(file);
    const rows = await again.withConnection(async (connection) =>
      (await connection.runAndReadAll('SELECT version, description FROM schema_version ORDER BY version')).getRowObjectsJS(),
    );
    expect(rows).toHaveLength(LATEST_SCHEMA_VERSION);
    expect(rows[0]).toMatchObject({ version: 1 });
    await closeAll();
    const reader = await open(file, true);
    expect(await reader.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
  });

  it('leaves a DuckDB file of another application untouched', async () => {
    const file = join(dir, 'other.duckdb');
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    await connection.run('CREATE TABLE inventory (item VARCHAR)');
    connection.closeSync();
    instance.closeSync();
    await expect(openStore(file)).rejects.toThrow(/not a PBH database; PBH leaves it untouched/);
    await expect(openStore(file, { readOnly: true })).rejects.toThrow(/not a PBH database/);
  });

  it('rolls a failing Profile back completely: no profile, session, sample, layer or score row remains', async () => {
    const store = await open(join(dir, 'pbh.duckdb'));
    await store.beginRun(runStart('run-1'));
    const bad = makeProfile({
      profileId: 'p-bad',
      runId: 'run-1',
      batchesPerSession: 200,
      layers: [
        { name: 'conv1', op_type: 'Conv', mean_ns: 1000, calls: 10, share: 0.5, input_shapes: null, output_shapes: null },
        // violates layers' CHECK (calls >= 0), after profiles, sessions and samples rows were already written
        { name: 'broken', op_type: 'Relu', mean_ns: 1000, calls: -1, share: 0.5, input_shapes: null, output_shapes: null },
      ],
    });
    const failure = store.writeProfile(bad);
    await expect(failure).rejects.toBeInstanceOf(StoreWriteError);
    await expect(failure).rejects.toThrow(/p-bad.*CHECK constraint.*rolled back/s);
    for (const table of ['profiles', 'sessions', 'samples', 'layers', 'scores']) {
      expect(await count(store, `SELECT count(*) FROM ${table} WHERE profile_id = 'p-bad'`), table).toBe(0);
    }
    expect(await count(store, 'SELECT count(*) FROM models')).toBe(0);

    // The connection is usable afterwards and the same id can be written once fixed.
    await store.writeProfile(makeProfile({ profileId: 'p-bad', runId: 'run-1', batchesPerSession: 10 }));
    expect(await count(store, `SELECT count(*) FROM samples WHERE profile_id = 'p-bad'`)).toBe(200);
  });

  it('refuses a duplicate profile id and a profile of a run never begun, writing nothing', async () => {
    const store = await open(join(dir, 'pbh.duckdb'));
    await store.beginRun(runStart('run-1'));
    await store.writeProfile(makeProfile({ profileId: 'p-1', runId: 'run-1', batchesPerSession: 10 }));
    await expect(store.writeProfile(makeProfile({ profileId: 'p-1', runId: 'run-1', batchesPerSession: 10 }))).rejects.toThrow(
      /already stored/,
    );
    await expect(store.writeProfile(makeProfile({ profileId: 'p-2', runId: 'run-x', batchesPerSession: 10 }))).rejects.toThrow(
      /run run-x is not recorded: call beginRun/,
    );
    expect(await count(store, 'SELECT count(*) FROM samples')).toBe(200);
    expect(await count(store, 'SELECT count(*) FROM profiles')).toBe(1);
  });

  it('keeps failed, timeout, invalid_output and skipped Profiles out of the views but in profiles', async () => {
    const store = await open(join(dir, 'pbh.duckdb'));
    await store.beginRun(runStart('run-1'));
    const small = { runId: 'run-1', batchesPerSession: 20, sessions: 2 };
    await store.writeProfile(makeProfile({ ...small, profileId: 'ort', engine: 'onnxruntime', meanNs: 200_000 }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'ov', engine: 'openvino', meanNs: 100_000 }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'tvm', engine: 'tvm', status: 'failed' }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'trt', engine: 'tensorrt', status: 'timeout' }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'bad', engine: 'tvm', batchSize: 1, status: 'invalid_output' }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'skip', engine: 'tensorrt', batchSize: 1, status: 'skipped' }));
    // A group without the reference engine compares against its fastest engine.
    await store.writeProfile(makeProfile({ ...small, profileId: 'ov-b32', engine: 'openvino', batchSize: 32, meanNs: 400_000 }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'tvm-b32', engine: 'tvm', batchSize: 32, meanNs: 800_000 }));

    expect(await count(store, 'SELECT count(*) FROM profiles')).toBe(8);
    const board = await store.withConnection(async (connection) =>
      (
        await connection.runAndReadAll(
          'SELECT profile_id, rank_in_group, batch_size, hardware, status, throughput_sps, p50_ms, top1, peak_rss_mb FROM leaderboard',
        )
      ).getRowObjectsJS(),
    );
    // Ranked within model x batch size x scenario x precision x hardware: each batch size counts from 1, best first.
    expect(board.map((row) => row.profile_id)).toEqual(['ov', 'ort', 'ov-b32', 'tvm-b32']);
    expect(board.map((row) => row.rank_in_group)).toEqual([1n, 2n, 1n, 2n]);
    for (const batch of new Set(board.map((row) => row.batch_size))) {
      const throughputs = board.filter((row) => row.batch_size === batch).map((row) => Number(row.throughput_sps));
      expect(throughputs).toEqual([...throughputs].sort((a, b) => b - a));
    }
    const system = makeProfile({ profileId: 'x', runId: 'run-1', batchesPerSession: 1 }).system;
    expect(new Set(board.map((row) => row.hardware))).toEqual(new Set([`${system.cpu_model} (${system.cpu_cores} threads) + ${system.gpus.map((g) => g.model).join(', ')}`]));
    expect(new Set(board.map((row) => row.status))).toEqual(new Set(['ok']));
    expect(board[0]?.top1).toBe(0.9712);

    const comparisons = await store.withConnection(async (connection) =>
      (
        await connection.runAndReadAll(
          `SELECT batch_size, engine, baseline_engine, baseline_kind, speedup, throughput_sps, baseline_throughput_sps
           FROM comparisons ORDER BY batch_size, engine`,
        )
      ).getRowObjectsJS(),
    );
    expect(comparisons.map((row) => [row.batch_size, row.engine, row.baseline_engine, row.baseline_kind])).toEqual([
      [8, 'onnxruntime', 'onnxruntime', 'reference'],
      [8, 'openvino', 'onnxruntime', 'reference'],
      [32, 'openvino', 'openvino', 'fastest'],
      [32, 'tvm', 'openvino', 'fastest'],
    ]);
    for (const row of comparisons) {
      expect(row.speedup).toBeCloseTo(Number(row.throughput_sps) / Number(row.baseline_throughput_sps), 12);
    }
    expect(Number(comparisons[1]?.speedup)).toBeGreaterThan(1.5);
    expect(Number(comparisons[3]?.speedup)).toBeLessThan(0.7);
  });

  it('okCellKeys lists cells with an ok Profile in any run, and none that only failed', async () => {
    const store = await open(join(dir, 'pbh.duckdb'));
    await store.beginRun(runStart('run-1'));
    await store.beginRun(runStart('run-2'));
    const small = { batchesPerSession: 5, sessions: 1 };
    await store.writeProfile(makeProfile({ ...small, profileId: 'a', runId: 'run-1', engine: 'onnxruntime' }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'b', runId: 'run-1', engine: 'tvm', status: 'failed' }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'c', runId: 'run-2', engine: 'openvino' }));
    await store.writeProfile(makeProfile({ ...small, profileId: 'd', runId: 'run-2', engine: 'tensorrt', status: 'timeout' }));
    expect(await store.okCellKeys()).toEqual(new Set(['digits-cnn|onnxruntime|cpu|b8', 'digits-cnn|openvino|cpu|b8']));

    const failed = await store.listProfiles({ status: 'failed' });
    expect(failed).toEqual([
      expect.objectContaining({ profile_id: 'b', engine_name: 'tvm', status: 'failed', throughput_sps: null, created_at: '2026-03-01T10:05:00.123Z' }),
    ]);
    expect((await store.listProfiles({ runId: 'run-2' })).map((p) => p.profile_id)).toEqual(['c', 'd']);
    expect(await store.listProfiles()).toHaveLength(4);
  });

  it('read-only stores refuse writes; a missing file is a clear error; the parent directory is created for writers', async () => {
    const file = join(dir, 'new', 'pbh.duckdb');
    await expect(openStore(file, { readOnly: true })).rejects.toBeInstanceOf(StoreNotFoundError);
    await expect(openStore(file, { readOnly: true })).rejects.toThrow(/No PBH database at .*new\/pbh\.duckdb/);
    expect(existsSync(file)).toBe(false);

    await open(file);
    await closeAll();
    const reader = await open(file, true);
    await expect(reader.beginRun(runStart('run-1'))).rejects.toBeInstanceOf(ReadOnlyStoreError);
    await expect(reader.writeProfile(makeProfile({ profileId: 'x', runId: 'run-1', batchesPerSession: 1 }))).rejects.toThrow(
      /opened read-only/,
    );
    await expect(runQuery(reader, `INSERT INTO runs (run_id) VALUES ('x')`)).rejects.toThrow(/queries open read-only.*DuckDB:/s);
    // Two readers of one file may coexist in one process.
    const second = await open(file, true);
    expect(await second.okCellKeys()).toEqual(new Set());
  });

  it('refuses a second open of a file this process holds read-write', async () => {
    const file = join(dir, 'pbh.duckdb');
    await open(file);
    const attempt = openStore(file, { readOnly: true });
    await expect(attempt).rejects.toBeInstanceOf(StoreLockedError);
    await expect(attempt).rejects.toThrow(`this process (PID ${process.pid})`);
  });

  describe('a file held by another process', () => {
    let holder: ChildProcess | undefined;
    afterEach(async () => {
      if (holder?.pid !== undefined && holder.exitCode === null && holder.signalCode === null) {
        const exited = new Promise((done) => holder?.once('exit', done));
        process.kill(holder.pid, 'SIGTERM');
        await exited;
      }
      holder = undefined;
    });

    it('throws StoreLockedError naming the file and the holder PID, for writers and readers alike', async () => {
      const file = join(dir, 'held.duckdb');
      await open(file);
      await closeAll();

      // The holder says "held" only once a garbage collection has run: it keeps its lock through one (see the fixture).
      holder = spawn(process.execPath, ['--expose-gc', join(repoRoot, 'test', 'fixtures', 'hold-database.mjs'), file], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const child = holder;
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await new Promise<void>((ready, fail) => {
        child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('held') && ready());
        child.once('exit', (code) => fail(new Error(`holder exited with ${code}: ${stderr}`)));
      });

      for (const readOnly of [false, true]) {
        const attempt = openStore(file, { readOnly });
        await expect(attempt).rejects.toBeInstanceOf(StoreLockedError);
        await expect(attempt).rejects.toThrow(file);
        await expect(attempt).rejects.toThrow(`another process (PID ${child.pid})`);
        await expect(attempt).rejects.toThrow(/wait for the other pbh run to finish, or pass --db with another file/i);
      }

      const exited = new Promise((done) => child.once('exit', done));
      process.kill(child.pid ?? 0, 'SIGTERM');
      await exited;
      const after = await open(file, true);
      expect(await after.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    });
  });

  it('migrates a v1 file to precision columns, and shows precision on the leaderboard', async () => {
    const file = join(dir, 'v1.duckdb');
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    for (const statement of MIGRATIONS.find((m) => m.version === 1)!.statements) await connection.run(statement);
    await connection.run('CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    await connection.run("INSERT INTO schema_version (version, description) VALUES (1, 'v1')");
    connection.closeSync();
    instance.closeSync();

    const store = await open(file);
    expect(await store.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    await store.beginRun(runStart('run-1'));
    await store.writeProfile(makeProfile({ profileId: 'p-1', runId: 'run-1' }));
    const rows = await store.withConnection(async (c) =>
      (await c.runAndReadAll('SELECT precision, precision_requested FROM leaderboard')).getRowObjectsJS(),
    );
    expect(rows).toEqual([{ precision: 'fp32', precision_requested: 'fp32' }]);
  });

  it('leaves a file that plain DuckDB reads, checkpointed on close', async () => {
    const file = join(dir, 'pbh.duckdb');
    const store = await open(file);
    await store.beginRun(runStart('run-1'));
    await store.writeProfile(makeProfile({ profileId: 'p-1', runId: 'run-1', batchesPerSession: 10 }));
    await Promise.all([store.close(), store.close()]);
    expect(existsSync(`${file}.wal`)).toBe(false);
    await expect(store.okCellKeys()).rejects.toThrow(/is closed/);
    const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
    const connection = await instance.connect();
    const rows = (await connection.runAndReadAll('SELECT count(*)::INTEGER AS n FROM samples')).getRowObjectsJS();
    expect(rows).toEqual([{ n: 200 }]);
    connection.closeSync();
    instance.closeSync();
  });
});
