import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Profile, SystemInfo } from '../../src/contracts/profile.js';
import { DuckDBInstance } from '@duckdb/node-api';
import { MIGRATIONS, openStore, StoreSchemaError, systemId } from '../../src/store/index.js';
import { systemRow } from '../../src/store/profile-rows.js';
import { insertRow } from '../../src/store/sql-rows.js';
import { describeConflict, mergeShards, MergeInputError } from '../../src/store/merge.js';
import { makeProfile, runStart, SYSTEM, tempDir } from '../store/profile-fixture.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

const NODE_2: SystemInfo = { ...SYSTEM, hostname: 'bench-02', cpu_model: 'AMD EPYC 9654', cpu_flags: 'avx2 avx512f avx512_bf16 fma' };

function profileOn(system: SystemInfo, id: string, runId: string, meanNs = 250_000): Profile {
  return { ...makeProfile({ profileId: id, runId, batchesPerSession: 10, sessions: 2, meanNs }), system };
}

/** A shard as one array task leaves it: its run (on its node) and the Profiles of that run. */
async function writeShard(name: string, runId: string, system: SystemInfo, profiles: Profile[], finished = true): Promise<string> {
  const file = join(dir, `${name}.duckdb`);
  const store = await openStore(file);
  await store.beginRun({ ...runStart(runId), system });
  for (const p of profiles) await store.writeProfile(p);
  if (finished) await store.finishRun(runId, '2026-03-01T10:09:00.000Z');
  await store.close();
  return file;
}

/** Every table of a store, rows in a fixed order, as text: equal snapshots mean nothing changed. */
async function snapshot(file: string): Promise<string> {
  const store = await openStore(file, { readOnly: true });
  try {
    const out: string[] = [];
    for (const table of ['systems', 'runs', 'models', 'profiles', 'sessions', 'samples', 'layers', 'scores']) {
      out.push(await store.withConnection(async (c) => JSON.stringify((await c.runAndReadAll(`SELECT * FROM ${table} ORDER BY ALL`)).getRowObjectsJson())));
    }
    return out.join('\n');
  } finally {
    await store.close();
  }
}

async function rows(file: string, sql: string): Promise<unknown[][]> {
  const store = await openStore(file, { readOnly: true });
  try {
    return await store.withConnection(async (c) => (await c.runAndReadAll(sql)).getRowsJson());
  } finally {
    await store.close();
  }
}

describe('mergeShards', () => {
  it('folds two nodes\u2019 shards into one store, keeping each node\u2019s system; the same shards again change nothing', async () => {
    const a = await writeShard('a', 'run-a', SYSTEM, [profileOn(SYSTEM, 'p-a1', 'run-a'), profileOn(SYSTEM, 'p-a2', 'run-a', 90_000)]);
    const b = await writeShard('b', 'run-b', NODE_2, [profileOn(NODE_2, 'p-b1', 'run-b', 120_000)]);
    const target = join(dir, 'results', 'pbh.duckdb');

    const first = await mergeShards({ target, shards: [a, b] });
    expect(first.conflicts).toEqual([]);
    expect(first.shards.map((s) => [s.profilesAdded, s.profilesPresent, s.runsAdded])).toEqual([[2, 0, 1], [1, 0, 1]]);

    expect(await rows(target, 'SELECT hostname, cpu_model FROM systems ORDER BY hostname')).toEqual([
      ['bench-01', SYSTEM.cpu_model],
      ['bench-02', 'AMD EPYC 9654'],
    ]);
    expect(await rows(target, `SELECT r.run_id, s.hostname, strftime(r.finished_at, '%H:%M') FROM runs r JOIN systems s USING (system_id) ORDER BY 1`)).toEqual([
      ['run-a', 'bench-01', '10:09'],
      ['run-b', 'bench-02', '10:09'],
    ]);
    expect(await rows(target, 'SELECT p.profile_id, s.hostname FROM profiles p JOIN systems s USING (system_id) ORDER BY 1')).toEqual([
      ['p-a1', 'bench-01'],
      ['p-a2', 'bench-01'],
      ['p-b1', 'bench-02'],
    ]);
    // The merged Profile reads back exactly as the shard's, raw samples included.
    const shard = await openStore(b, { readOnly: true });
    const fromShard = await shard.getProfile('p-b1');
    await shard.close();
    const merged = await openStore(target, { readOnly: true });
    expect(await merged.getProfile('p-b1')).toEqual(fromShard);
    await merged.close();

    const before = await snapshot(target);
    const again = await mergeShards({ target, shards: [b, a, a] });
    expect(again.conflicts).toEqual([]);
    expect(again.shards.map((s) => [s.profilesAdded, s.profilesPresent, s.runsAdded])).toEqual([[0, 1, 0], [0, 2, 0]]);
    expect(await snapshot(target)).toBe(before);
  });

  it('reports two different Profiles claiming one id, naming both files, and keeps the stored one', async () => {
    const a = await writeShard('a', 'run-a', SYSTEM, [profileOn(SYSTEM, 'p-1', 'run-a')]);
    const c = await writeShard('c', 'run-c', NODE_2, [profileOn(NODE_2, 'p-1', 'run-c', 999_000), profileOn(NODE_2, 'p-2', 'run-c')]);
    const target = join(dir, 'merged.duckdb');

    const result = await mergeShards({ target, shards: [a, c] });
    expect(result.conflicts).toEqual([{ kind: 'profile', id: 'p-1', storedFrom: a, shard: c }]);
    const line = describeConflict(result.conflicts[0]!, result.target);
    expect(line).toContain(a);
    expect(line).toContain(c);
    expect(await rows(target, 'SELECT profile_id, run_id FROM profiles ORDER BY 1')).toEqual([['p-1', 'run-a'], ['p-2', 'run-c']]);

    // Later, against the target: the stored copy is the other file named.
    const later = await mergeShards({ target, shards: [c] });
    expect(later.conflicts).toEqual([{ kind: 'profile', id: 'p-1', storedFrom: result.target, shard: c }]);
    expect(describeConflict(later.conflicts[0]!, later.target)).toContain(`already stored in ${result.target}`);
  });

  it('refuses a shard written by a newer pbh before writing anything', async () => {
    const a = await writeShard('a', 'run-a', SYSTEM, [profileOn(SYSTEM, 'p-a1', 'run-a')]);
    const newer = await writeShard('newer', 'run-n', SYSTEM, [profileOn(SYSTEM, 'p-n1', 'run-n')]);
    const store = await openStore(newer);
    await store.withConnection((c) => c.run(`INSERT INTO schema_version (version, description) VALUES (999, 'from the future')`));
    await store.close();
    const target = join(dir, 'merged.duckdb');

    const merging = mergeShards({ target, shards: [a, newer] });
    await expect(merging).rejects.toThrow(StoreSchemaError);
    await expect(mergeShards({ target, shards: [a, newer] })).rejects.toThrow(new RegExp(`${newer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has schema v999, newer than this pbh`));
    expect(existsSync(target)).toBe(false);
  });

  it('completes on a rerun after stopping between Profiles, as from a merge never interrupted', async () => {
    const a = await writeShard('a', 'run-a', SYSTEM, [profileOn(SYSTEM, 'p-a1', 'run-a'), profileOn(SYSTEM, 'p-a2', 'run-a')]);
    // A shard whose run never finished (its task was killed) still brings every Profile it holds.
    const b = await writeShard('b', 'run-b', NODE_2, [profileOn(NODE_2, 'p-b1', 'run-b'), profileOn(NODE_2, 'p-b2', 'run-b')], false);
    const whole = join(dir, 'whole.duckdb');
    await mergeShards({ target: whole, shards: [a, b] });

    const target = join(dir, 'interrupted.duckdb');
    for (const stopAfter of [1, 3]) {
      let asked = 0;
      const partial = await mergeShards({ target, shards: [a, b], shouldStop: () => ++asked > stopAfter });
      expect(partial.stopped).toBe(true);
    }
    expect(await rows(target, 'SELECT count(*)::INTEGER FROM profiles')).not.toEqual([[4]]);
    const rerun = await mergeShards({ target, shards: [a, b] });
    expect(rerun.stopped).toBe(false);
    expect(rerun.conflicts).toEqual([]);
    expect(await snapshot(target)).toBe(await snapshot(whole));
    expect(await rows(target, `SELECT run_id, finished_at IS NULL FROM runs ORDER BY 1`)).toEqual([['run-a', false], ['run-b', true]]);
  });

  it('reads a shard of an older schema through a migrated copy, leaving the shard as it was', async () => {
    // A shard as pbh at schema v1 left it (the released v1 statements are frozen): one run on its node.
    const old = join(dir, 'v1.duckdb');
    const instance = await DuckDBInstance.create(old);
    const c = await instance.connect();
    await c.run('CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)');
    for (const statement of MIGRATIONS[0]!.statements) await c.run(statement);
    await c.run(`INSERT INTO schema_version (version, description) VALUES (1, 'v1')`);
    await insertRow(c, 'systems', systemRow(NODE_2));
    await c.run(
      `INSERT INTO runs VALUES ('run-old', 'old', '2026-01-01T00:00:00Z', '2026-01-01T00:10:00Z', '{"name":"old"}', 'pbh run old.yaml', '0.0.9', NULL, $1)`,
      [systemId(NODE_2)],
    );
    c.closeSync();
    instance.closeSync();
    const digest = createHash('sha256').update(readFileSync(old)).digest('hex');

    const target = join(dir, 'merged.duckdb');
    const result = await mergeShards({ target, shards: [old] });
    expect(result.shards).toEqual([{ file: old, runsAdded: 1, runsFinished: 0, profilesAdded: 0, profilesPresent: 0, profilesRefused: 0 }]);
    expect(await rows(target, 'SELECT r.run_id, s.hostname FROM runs r JOIN systems s USING (system_id)')).toEqual([['run-old', 'bench-02']]);
    expect(createHash('sha256').update(readFileSync(old)).digest('hex')).toBe(digest);
  });

  it('refuses to merge a store into itself', async () => {
    const a = await writeShard('a', 'run-a', SYSTEM, [profileOn(SYSTEM, 'p-a1', 'run-a')]);
    await expect(mergeShards({ target: a, shards: [a] })).rejects.toThrow(MergeInputError);
    await expect(mergeShards({ target: join(dir, 'x.duckdb'), shards: [] })).rejects.toThrow(/at least one shard/);
  });
});
