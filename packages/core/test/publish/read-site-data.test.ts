import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SITE_DATA_VERSION, SiteDataSchema, fullProfile, readSiteData } from '../../src/publish/index.js';
import { StoreLockedError, StoreNotFoundError, openStore } from '../../src/store/index.js';
import { makeProfile, runStart, tempDir } from '../store/profile-fixture.js';

let dir: string;
let cleanup: () => void;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

const small = { sessions: 3, batchesPerSession: 20 };

/** Two runs: two ok Profiles of one model at different speeds, a failed one, and an ok one of another model. */
async function writeStore(file: string) {
  const profiles = [
    makeProfile({ profileId: 'slow', runId: 'run-1', engine: 'tvm', meanNs: 400_000, ...small }),
    makeProfile({ profileId: 'fast', runId: 'run-1', engine: 'onnxruntime', meanNs: 200_000, ...small }),
    makeProfile({ profileId: 'broken', runId: 'run-1', engine: 'openvino', status: 'failed', ...small }),
    makeProfile({ profileId: 'other', runId: 'run-2', model: 'resnet50', ...small }),
  ];
  const store = await openStore(file);
  try {
    await store.beginRun(runStart('run-1'));
    await store.beginRun({ ...runStart('run-2'), started_at: '2026-03-02T10:00:00.000Z' });
    for (const profile of profiles) await store.writeProfile(profile);
    await store.finishRun('run-1', '2026-03-01T11:00:00.000Z');
  } finally {
    await store.close();
  }
  return profiles;
}

describe('readSiteData', () => {
  it('publishes every Profile, run and sample of a real store, satisfying the versioned contract', async () => {
    const file = join(dir, 'results.duckdb');
    const written = await writeStore(file);
    const data = await readSiteData(file);

    expect(SiteDataSchema.parse(data)).toEqual(data);
    expect(data.version).toBe(SITE_DATA_VERSION);
    expect(data.db_file).toBe('results.duckdb');
    expect(data.runs.map((r) => [r.run_id, r.profiles, r.finished_at])).toEqual([
      ['run-1', 3, '2026-03-01T11:00:00.000Z'],
      ['run-2', 1, null],
    ]);
    expect(data.profiles.map((p) => p.profile_id).sort()).toEqual(['broken', 'fast', 'other', 'slow']);

    const byId = new Map(data.profiles.map((p) => [p.profile_id, p]));
    const fast = byId.get('fast')!;
    expect(fast).toMatchObject({ status: 'ok', run_name: 'sparsity-study', engine_name: 'onnxruntime', cpu_model: written[1]!.system.cpu_model });
    expect(fast.gpus).toEqual(written[1]!.system.gpus);
    expect(fast.session_throughputs).toEqual(written[1]!.sessions.map((s) => s.throughput_sps));
    expect(fast.predict_p50_ms).toBeCloseTo(written[1]!.latency.predict!.p50 / 1e6, 9);
  });

  it('ranks ok Profiles within their model as the leaderboard view does, and leaves the others unranked', async () => {
    const file = join(dir, 'results.duckdb');
    await writeStore(file);
    const ranks = Object.fromEntries((await readSiteData(file)).profiles.map((p) => [p.profile_id, p.rank_in_model]));
    expect(ranks).toEqual({ fast: 1, slow: 2, broken: null, other: 1 });
  });

  it("gives back each Profile exactly as written, raw samples included, under the table's ids", async () => {
    const file = join(dir, 'results.duckdb');
    const written = await writeStore(file);
    const data = await readSiteData(file);
    for (const profile of written) {
      const published = data.profiles.find((p) => p.profile_id === profile.profile_id)!;
      expect(fullProfile(published)).toEqual(profile);
    }

    // A row copied with SQL under a new id (as bench:site replicates runs) keeps the old id inside profile_json.
    const store = await openStore(file);
    try {
      await store.withConnection((c) => c.run(`UPDATE profiles SET profile_id = 'copy' WHERE profile_id = 'other'`));
    } finally {
      await store.close();
    }
    const copied = (await readSiteData(file)).profiles.find((p) => p.profile_id === 'copy')!;
    expect(copied.profile.profile_id).toBe('copy');
  });

  it('refuses a file a writer holds with the typed lock error, and a missing file with its own', async () => {
    const file = join(dir, 'busy.duckdb');
    const writer = await openStore(file);
    try {
      await expect(readSiteData(file)).rejects.toBeInstanceOf(StoreLockedError);
    } finally {
      await writer.close();
    }
    await expect(readSiteData(join(dir, 'missing.duckdb'))).rejects.toBeInstanceOf(StoreNotFoundError);
  });
});
