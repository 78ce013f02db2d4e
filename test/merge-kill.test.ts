import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../packages/core/src/store/index.js';
import { makeProfile, runStart, SYSTEM } from '../packages/core/test/store/profile-fixture.js';
import { pbh, tempDir } from './helpers.js';
import { PBH_BIN, ROOT } from './suite.js';

const SHARDS = 4;
const PER_SHARD = 2;
const SESSIONS = 5;
const BATCHES = 250;

/** Shards as four nodes' array tasks leave them: a run on the node and two Profiles with 5,000 raw samples each. */
async function writeShards(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (let s = 0; s < SHARDS; s++) {
    const file = path.join(dir, 'shards', `node${s}.duckdb`);
    const system = { ...SYSTEM, hostname: `node-${s}` };
    const store = await openStore(file);
    await store.beginRun({ ...runStart(`run-${s}`), system });
    for (let p = 0; p < PER_SHARD; p++) {
      await store.writeProfile({ ...makeProfile({ profileId: `p-${s}-${p}`, runId: `run-${s}`, sessions: SESSIONS, batchesPerSession: BATCHES, batchSize: p + 1 }), system });
    }
    await store.finishRun(`run-${s}`);
    await store.close();
    files.push(file);
  }
  return files;
}

/** pbh merge, SIGKILLed as soon as it reports its first shard merged: the next shard is then in flight. */
function mergeKilledMidway(shards: string[], db: string): Promise<{ signal: NodeJS.Signals | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PBH_BIN, 'merge', ...shards, '--db', db], { cwd: ROOT });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.includes('Profile(s) added')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (_code, signal) => resolve({ signal, stdout }));
  });
}

/** Rows as JSON, read in this process (read-only): quicker than a pbh query per check. */
async function read(db: string, sql: string): Promise<Record<string, unknown>[]> {
  const store = await openStore(db, { readOnly: true });
  try {
    return await store.withConnection(async (c) => (await c.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]);
  } finally {
    await store.close();
  }
}

const CONTENTS = `SELECT (SELECT count(*) FROM profiles)::INTEGER AS profiles, (SELECT count(*) FROM samples)::INTEGER AS samples,
  (SELECT count(*) FROM runs)::INTEGER AS runs, (SELECT count(*) FROM systems)::INTEGER AS systems,
  (SELECT md5(string_agg(profile_json::VARCHAR, '' ORDER BY profile_id)) FROM profiles) AS digest`;

describe('pbh merge killed mid-way', () => {
  it('never leaves half a Profile, and a rerun completes it to what an uninterrupted merge gives', async () => {
    const dir = await tempDir('pbh-merge-kill-');
    const shards = await writeShards(dir);
    const whole = path.join(dir, 'whole.duckdb');
    const once = await pbh(['merge', ...shards, '--db', whole]);
    expect(once.code).toBe(0);

    const db = path.join(dir, 'killed.duckdb');
    const killed = await mergeKilledMidway(shards, db);
    expect(killed.signal).toBe('SIGKILL');
    // Whatever was committed is whole: each stored Profile has every raw sample, none has a part of them.
    const partial = await read(
      db,
      'SELECT p.profile_id, count(s.seq)::INTEGER AS n FROM profiles p LEFT JOIN samples s USING (profile_id) GROUP BY ALL ORDER BY 1',
    );
    expect(partial.length).toBeGreaterThanOrEqual(PER_SHARD);
    expect(partial.length).toBeLessThan(SHARDS * PER_SHARD);
    for (const row of partial) expect(row.n).toBe(SESSIONS * BATCHES * 4);

    const rerun = await pbh(['merge', ...shards, '--db', db]);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toContain(`${partial.length} already stored`);
    const merged = await read(db, CONTENTS);
    expect(merged).toEqual(await read(whole, CONTENTS));
    expect(merged[0]).toMatchObject({ profiles: SHARDS * PER_SHARD, runs: SHARDS, systems: SHARDS });
  }, 180_000);
});
