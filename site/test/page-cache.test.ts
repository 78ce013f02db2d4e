import { describe, expect, it } from 'vitest';
import type { ProfileEntry } from '../src/lib/data.js';
import { pageInputs, profilePageKey } from '../src/lib/profile-page/cache.js';

/**
 * A kept Profile page is copied into later builds under its key (src/lib/profile-page/cache.ts): the key must change
 * with anything the page is made from. The page itself is compared byte for byte with a fresh render in pages.test.ts.
 */
function entry(): ProfileEntry {
  // Only what the key reads: every field, whatever it is, and the raw samples' four columns.
  return {
    profile_id: 'p-1',
    slug: 'p1',
    status: 'ok',
    throughput_mean: 1234.5,
    rank_in_group: 2,
    profile: { scores: [{ metric: 'top1', value: 0.9 }], layers: [{ name: 'conv', mean_ns: 10 }] },
    samples: { session: Int32Array.of(0, 0, 1), batch: Int32Array.of(0, 1, 0), boundary: ['engine', 'engine', 'predict'], ns: Float64Array.of(1e6, 2e6, 3e6) },
  } as unknown as ProfileEntry;
}

const key = (e: ProfileEntry, code = 'code-1', runConfig = 'runs/r.html#config'): string => profilePageKey(code, e, runConfig);

describe('the key a Profile page is kept under', () => {
  it('is the same for the same inputs', () => {
    expect(key(entry())).toBe(key(entry()));
  });

  it('changes with the site code, the run-config link and the folder paths are shown relative to', () => {
    const base = key(entry());
    expect(key(entry(), 'code-2')).not.toBe(base);
    expect(key(entry(), 'code-1', 'runs/r.html#config-2')).not.toBe(base);
    const repo = process.env.PBH_SITE_REPO;
    process.env.PBH_SITE_REPO = '/somewhere/else';
    try {
      expect(key(entry())).not.toBe(base);
    } finally {
      if (repo === undefined) delete process.env.PBH_SITE_REPO;
      else process.env.PBH_SITE_REPO = repo;
    }
  });

  it('stays the same when only the rank moves (other Profiles stored), which the page is rendered without', () => {
    const moved = entry();
    Object.assign(moved, { rank_in_group: 7 });
    expect(key(moved)).toBe(key(entry()));
    expect(pageInputs(moved).rank_in_group).toBeNull();
  });

  it('changes with any other field of the Profile, nested ones included, and with any raw sample', () => {
    const base = key(entry());
    const changed: ((e: ProfileEntry) => void)[] = [
      (e) => Object.assign(e, { slug: 'p1-long' }),
      (e) => Object.assign(e, { throughput_mean: 1234.6 }),
      (e) => ((e.profile.scores[0] as { value: number }).value = 0.91),
      (e) => ((e.samples.ns as Float64Array)[2] = 3e6 + 1),
      (e) => ((e.samples.session as Int32Array)[2] = 2),
      (e) => ((e.samples.batch as Int32Array)[1] = 2),
      (e) => ((e.samples.boundary as string[])[2] = 'transport'),
    ];
    for (const change of changed) {
      const e = entry();
      change(e);
      expect(key(e), String(change)).not.toBe(base);
    }
  });
});
