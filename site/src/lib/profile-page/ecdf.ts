import { chartPool } from '../../charts/pool.js';
import type { ProfileEntry } from '../data.js';
import { latencyEcdfAsync } from '../profile-view.js';

const queued = new Map<string, Promise<{ svg: string } | null>>();

function queue(entry: ProfileEntry): Promise<{ svg: string } | null> {
  let chart = queued.get(entry.slug);
  if (!chart) {
    chart = latencyEcdfAsync(entry.samples, 'ecdf');
    queued.set(entry.slug, chart);
  }
  return chart;
}

/**
 * Every Profile's ECDF handed to the chart pool in page order, before the first Profile page renders: the workers
 * draw ahead of the pages instead of waiting for each page to ask. Without a pool each page draws its own.
 */
export function queueProfileEcdfs(entries: readonly ProfileEntry[]): void {
  if (!chartPool()) return;
  for (const entry of entries) void queue(entry).catch(() => undefined);
}

/** The Profile's ECDF (null without samples); its markup is let go once the page has it. */
export async function profileEcdf(entry: ProfileEntry): Promise<{ svg: string } | null> {
  const chart = await queue(entry);
  queued.delete(entry.slug);
  return chart;
}
