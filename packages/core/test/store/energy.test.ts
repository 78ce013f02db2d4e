import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { offEnergy } from '../../src/energy/summary.js';
import { openStore } from '../../src/store/index.js';
import { makeProfile, runStart } from './profile-fixture.js';

describe('energy in the store (schema v5)', () => {
  it('puts J/sample, watts, method and reason in profiles and the leaderboard; a NULL stays NULL, and the Profile reads back whole', async () => {
    const store = await openStore(path.join(await mkdtemp(path.join(os.tmpdir(), 'pbh-energy-store-')), 'e.duckdb'));
    await store.beginRun(runStart('run-1'));
    const measured = makeProfile({ profileId: 'p-1', runId: 'run-1' });
    measured.energy = { ...offEnergy(''), joules_per_sample: 0.25, mean_watts: 40, method: 'estimated_tdp', reason: 'no RAPL counter', min_ticks: 20 };
    const none = makeProfile({ profileId: 'p-2', runId: 'run-1' });
    none.energy = offEnergy('energy collection is off (energy.enabled: false)');
    await store.writeProfile(measured);
    await store.writeProfile(none);
    const rows = await store.withConnection(async (c) =>
      (await c.runAndReadAll('SELECT l.profile_id, l.energy_j_per_sample, l.energy_method, p.energy_mean_w, p.energy_reason FROM leaderboard l JOIN profiles p USING (profile_id) ORDER BY 1')).getRowObjectsJS(),
    );
    expect(rows).toEqual([
      { profile_id: 'p-1', energy_j_per_sample: 0.25, energy_method: 'estimated_tdp', energy_mean_w: 40, energy_reason: 'no RAPL counter' },
      { profile_id: 'p-2', energy_j_per_sample: null, energy_method: null, energy_mean_w: null, energy_reason: 'energy collection is off (energy.enabled: false)' },
    ]);
    expect((await store.getProfile('p-1'))?.energy).toEqual(measured.energy);
    await store.close();
  });
});
