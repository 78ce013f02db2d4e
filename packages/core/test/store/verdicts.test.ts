import { DuckDBInstance } from '@duckdb/node-api';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProfileSchema } from '../../src/contracts/profile.js';
import { profileVerdicts } from '../../src/publish/verdicts.js';
import { NOISE_MAX_CI_HALF_WIDTH, NOISE_MIN_SESSION_MS } from '../../src/publish/noise.js';
import { MIGRATIONS, openStore } from '../../src/store/index.js';
import { profileJsonWithoutSamples, profileRow, sessionRow, systemRow } from '../../src/store/profile-rows.js';
import { insertRow } from '../../src/store/sql-rows.js';
import { BACKFILL_MAX_CI_HALF_WIDTH, BACKFILL_MIN_SESSION_MS, VERDICT_COLUMNS } from '../../src/store/verdict-schema.js';
import { makeProfile, tempDir } from './profile-fixture.js';

describe('stored verdicts (schema v7)', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir()));
  afterEach(() => cleanup());

  it('judges old Profiles by the same numbers the harness judges new ones by', () => {
    expect(BACKFILL_MIN_SESSION_MS).toBe(NOISE_MIN_SESSION_MS);
    expect(BACKFILL_MAX_CI_HALF_WIDTH).toBe(NOISE_MAX_CI_HALF_WIDTH);
  });

  it('stores the verdicts judged at assembly as columns, and fills them for a v6 file\'s Profiles', async () => {
    const file = join(dir, 'v6.duckdb');
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    for (const m of MIGRATIONS.filter((m) => m.version <= 6)) for (const statement of m.statements) await connection.run(statement);
    await connection.run('CREATE TABLE schema_version (version INTEGER PRIMARY KEY, description VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())');
    await connection.run("INSERT INTO schema_version (version, description) VALUES (6, 'v6')");
    await insertRow(connection, 'systems', systemRow(makeProfile({ profileId: 'x', runId: 'run-1' }).system), true);
    await connection.run(`INSERT INTO runs (run_id, name, started_at, config, command, harness_version, system_id) SELECT 'run-1', 'r', now(), '{}', 'pbh', 'test', system_id FROM systems`);
    // A Profile written before v7: no verdicts in its JSON, none of v7's columns; its sessions short and the machine busy.
    const old = makeProfile({ profileId: 'old', runId: 'run-1' });
    old.sessions = old.sessions.map((s) => ({ ...s, wall_ns: 40e6 }));
    old.interference = { ...old.interference!, busy: true };
    const { verdicts: _v, rounds: _r, ...before } = old;
    const v7 = new Set(VERDICT_COLUMNS.map((c) => c.split(' ')[0]));
    const row = Object.fromEntries(Object.entries(profileRow(old)).filter(([k]) => !v7.has(k)));
    row.profile_json = profileJsonWithoutSamples(before as typeof old);
    await insertRow(connection, 'systems', systemRow(old.system), true);
    await insertRow(connection, 'profiles', row);
    for (const s of old.sessions) await insertRow(connection, 'sessions', sessionRow(old.profile_id, s));
    connection.closeSync();
    instance.closeSync();

    const store = await openStore(file);
    try {
      const fresh = makeProfile({ profileId: 'new', runId: 'run-1' });
      fresh.verdicts = profileVerdicts(fresh);
      await store.writeProfile(fresh);
      const rows = await store.withConnection(async (c) =>
        (await c.runAndReadAll('SELECT profile_id, noisy, busy, short_session_ms, profile_json FROM profiles ORDER BY profile_id')).getRowObjectsJS(),
      );
      const byId = new Map(rows.map((r) => [r.profile_id, r]));
      expect(byId.get('old')).toMatchObject({ noisy: true, busy: true, short_session_ms: 40 });
      expect(byId.get('new')).toMatchObject({ noisy: false, busy: false, short_session_ms: null });
      // The old Profile's JSON now carries the same verdict, and still reads as a Profile.
      const json = ProfileSchema.parse({ ...JSON.parse(String(byId.get('old')!.profile_json)), samples: [] });
      expect(json.verdicts).toEqual(profileVerdicts(old));
    } finally {
      await store.close();
    }
  });
});
