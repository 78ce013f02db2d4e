import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SampleColumns } from '@pbh/core';
import { describe, expect, it } from 'vitest';
import { bundleChartWorker } from '../integrations/pbh-assets.js';

// The pool and the cache read the environment when first used: the worker is bundled as a build bundles it, the
// cache is off so that every chart here is drawn, then the modules are loaded.
const siteDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.env.PBH_SITE_CHART_WORKER = await bundleChartWorker(siteDir);
process.env.PBH_SITE_CHART_CACHE = 'off';
delete process.env.PBH_SITE_CHART_THREADS;
const { chartPool } = await import('../src/charts/pool.js');
const { latencyEcdf, latencyEcdfAsync } = await import('../src/lib/profile-view.js');

const samples = (shift: number): SampleColumns => ({
  session: Array.from({ length: 200 }, (_, i) => i % 2),
  batch: Array.from({ length: 200 }, (_, i) => i % 100),
  boundary: Array.from({ length: 200 }, (_, i) => (i < 100 ? 'engine' : 'predict')),
  ns: Array.from({ length: 200 }, (_, i) => 50_000 + ((i * 7919) % 1000) * 100 + shift),
});

describe('chart pool: charts drawn on worker threads during a build', () => {
  it('draws the same ECDF markup on a worker as in the calling thread, for many charts at once', async () => {
    expect(chartPool()).not.toBeNull();
    const shifts = Array.from({ length: 12 }, (_, i) => i * 1000);
    const drawn = await Promise.all(shifts.map((shift) => latencyEcdfAsync(samples(shift), 'ecdf')));
    expect(drawn.map((chart) => chart?.svg)).toEqual(shifts.map((shift) => latencyEcdf(samples(shift), 'ecdf')?.svg));
    expect(new Set(drawn.map((chart) => chart?.svg)).size).toBe(shifts.length);
    expect(drawn[0]?.svg).toContain('<svg');
  });

  it('has no chart for a Profile without samples, and says what it cannot draw', async () => {
    expect(await latencyEcdfAsync({ session: [], batch: [], boundary: [], ns: [] }, 'ecdf')).toBeNull();
    const pool = chartPool()!;
    await expect(pool.draw('histogram', {})).rejects.toThrow(/no chart kind histogram \(known: ecdf\)/);
    await expect(pool.draw('ecdf', { id: 'x' })).rejects.toThrow(/Chart ecdf failed on a worker thread: .*names/s);
  });
});
