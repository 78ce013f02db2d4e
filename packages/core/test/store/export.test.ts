import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORTED_RELATIONS, exportStore, openStore, type ProfileStore } from '../../src/store/index.js';
import { makeProfile, runStart, tempDir } from './profile-fixture.js';

let dir: string;
let cleanup: () => void;
let reader: ProfileStore;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir());
  const writer = await openStore(join(dir, 'pbh.duckdb'));
  await writer.beginRun(runStart('run-1'));
  await writer.writeProfile(makeProfile({ profileId: 'ort', runId: 'run-1', batchesPerSession: 100 }));
  await writer.writeProfile(makeProfile({ profileId: 'tvm', runId: 'run-1', engine: 'tvm', status: 'failed' }));
  await writer.close();
  reader = await openStore(join(dir, 'pbh.duckdb'), { readOnly: true });
});
afterAll(async () => {
  await reader.close();
  cleanup();
});

async function readBack(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJS();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('exportStore', () => {
  it('writes one Parquet file per table and view that DuckDB reads back', async () => {
    const files = await exportStore(reader, { format: 'parquet', outDir: join(dir, 'out', 'parquet') });
    expect(files.map((file) => basename(file))).toEqual(EXPORTED_RELATIONS.map((name) => `${name}.parquet`));
    const samples = await readBack(
      `SELECT count(*)::INTEGER AS n, sum(ns) AS total FROM read_parquet('${join(dir, 'out', 'parquet', 'samples.parquet')}')`,
    );
    expect(samples[0]?.n).toBe(2000);
    const codecs = await readBack(`SELECT DISTINCT compression FROM parquet_metadata('${join(dir, 'out', 'parquet', 'samples.parquet')}')`);
    expect(codecs).toEqual([{ compression: 'ZSTD' }]);
    const board = await readBack(`SELECT profile_id, status FROM read_parquet('${join(dir, 'out', 'parquet', 'leaderboard.parquet')}')`);
    expect(board).toEqual([{ profile_id: 'ort', status: 'ok' }]);
    const profiles = await readBack(
      `SELECT profile_id, status FROM read_parquet('${join(dir, 'out', 'parquet', 'profiles.parquet')}') ORDER BY profile_id`,
    );
    expect(profiles).toEqual([
      { profile_id: 'ort', status: 'ok' },
      { profile_id: 'tvm', status: 'failed' },
    ]);
  });

  it('leaves out the columns it is told to, in Parquet and CSV alike, and keeps every other', async () => {
    const columnsOf = async (sql: string): Promise<string[]> => (await readBack(`SELECT column_name FROM (DESCRIBE ${sql})`)).map((r) => String(r.column_name));
    const full = await columnsOf(`SELECT * FROM read_parquet('${join(dir, 'out', 'parquet', 'profiles.parquet')}')`);
    expect(full).toContain('profile_json');
    for (const format of ['parquet', 'csv'] as const) {
      const out = join(dir, 'out', `omit-${format}`);
      await exportStore(reader, { format, outDir: out, omit: { profiles: ['profile_json'] } });
      const tableFunction = format === 'parquet' ? 'read_parquet' : 'read_csv';
      expect(await columnsOf(`SELECT * FROM ${tableFunction}('${join(out, `profiles.${format}`)}')`)).toEqual(full.filter((c) => c !== 'profile_json'));
      expect(await columnsOf(`SELECT * FROM ${tableFunction}('${join(out, `runs.${format}`)}')`)).toContain('config');
    }
  });

  it('writes CSV with a header and JSON arrays', async () => {
    const csv = await exportStore(reader, { format: 'csv', outDir: join(dir, 'out', 'csv') });
    const runs = readFileSync(csv.find((file) => file.endsWith('runs.csv')) ?? '', 'utf8');
    expect(runs.split('\n')[0]).toMatch(/^run_id,name,started_at,finished_at,config,/);
    const json = await exportStore(reader, { format: 'json', outDir: join(dir, 'out', 'json') });
    const scores = JSON.parse(readFileSync(json.find((file) => file.endsWith('scores.json')) ?? '', 'utf8')) as unknown[];
    expect(scores).toEqual([
      { profile_id: 'ort', seq: 0, metric: 'top1', value: 0.9712, samples: 512, higher_is_better: true },
      { profile_id: 'ort', seq: 1, metric: 'top5', value: 0.998, samples: 512, higher_is_better: true },
    ]);
  });
});
