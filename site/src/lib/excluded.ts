import { excludedCells, ExperimentSchema, type ExcludedCell } from '@pbh/core';
import type { ProfileEntry } from './data.js';

/** A cell a config left out, with the experiment it belongs to. */
export interface Excluded extends ExcludedCell {
  experiment: string;
}

const computed = new WeakMap<readonly ProfileEntry[], Excluded[]>();

/**
 * Every cell the configs of the stored runs leave out (`exclude:`), with its reason: from each experiment's newest
 * stored config (the one its latest run used), so an exclusion later removed is not listed. A config that no longer
 * parses under this schema is passed over: its Profiles still show.
 */
export function excludedOf(profiles: readonly ProfileEntry[]): Excluded[] {
  let out = computed.get(profiles);
  if (out) return out;
  const newest = new Map<string, ProfileEntry>();
  for (const p of profiles) {
    const name = p.run_name ?? p.run_id;
    const seen = newest.get(name);
    if (!seen || p.created_at > seen.created_at) newest.set(name, p);
  }
  out = [];
  for (const [name, p] of newest) {
    const parsed = ExperimentSchema.safeParse((p.profile.config as { experiment?: unknown } | null)?.experiment);
    if (!parsed.success) continue;
    for (const cell of excludedCells(parsed.data)) out.push({ ...cell, experiment: parsed.data.name ?? name });
  }
  computed.set(profiles, out);
  return out;
}
