import type { ProfileEntry, SiteData } from './data.js';
import { slugFor } from './slug.js';

/**
 * A Profile's config is the run's experiment config plus its own cell (model, engine, batch size). The experiment part
 * is the same for every Profile of a run, so it is shown once, on the run's page (runs/<id>.html), and a Profile
 * page shows its cell and links there: at 10,000 Profiles the copies were ~3 KB on every Profile page.
 */

/** A run's page name: its id where that is a safe file name (a UUID is), else slugFor's cleaned name and hash. */
export function runSlug(runId: string): string {
  return slugFor(runId);
}

/** The Profile's own part of its config (`cell`) and the run's (everything else), as stored. */
export function splitConfig(config: Record<string, unknown>): { cell: unknown; run: Record<string, unknown> } {
  const { cell, ...run } = config;
  return { cell: cell ?? null, run };
}

/** One distinct run-level config and the Profiles stored with it (a run normally has one; a resumed run may have more). */
export interface RunConfig {
  config: Record<string, unknown>;
  profiles: ProfileEntry[];
}

interface RunConfigs {
  byRun: Map<string, RunConfig[]>;
  /** A Profile's config among its run's: its index there. */
  index: Map<string, number>;
}

const computed = new WeakMap<ProfileEntry[], RunConfigs>();

function group(profiles: ProfileEntry[]): RunConfigs {
  const byRun = new Map<string, RunConfig[]>();
  const keys = new Map<string, Map<string, number>>();
  const index = new Map<string, number>();
  for (const p of profiles) {
    const { run } = splitConfig(p.profile.config);
    const key = JSON.stringify(run);
    const configs = byRun.get(p.run_id) ?? [];
    const seen = keys.get(p.run_id) ?? new Map<string, number>();
    let i = seen.get(key);
    if (i === undefined) {
      i = configs.length;
      configs.push({ config: run, profiles: [] });
      seen.set(key, i);
    }
    configs[i]!.profiles.push(p);
    index.set(p.profile_id, i);
    byRun.set(p.run_id, configs);
    keys.set(p.run_id, seen);
  }
  return { byRun, index };
}

function runConfigsOf(data: SiteData): RunConfigs {
  let configs = computed.get(data.profiles);
  if (!configs) {
    configs = group(data.profiles);
    computed.set(data.profiles, configs);
  }
  return configs;
}

/** A run's distinct configs, in the order its Profiles were stored; empty for a run without Profiles. */
export function configsOfRun(data: SiteData, runId: string): RunConfig[] {
  return runConfigsOf(data).byRun.get(runId) ?? [];
}

/** The anchor of a run's config on its page: `config`, or `config-2` and on where a run has several. */
export function configAnchor(index: number, count: number): string {
  return count <= 1 ? 'config' : `config-${index + 1}`;
}

/** Where a Profile's run-level config is, relative to the site's root: `runs/<id>.html#config`. */
export function runConfigHref(data: SiteData, entry: ProfileEntry): string {
  const configs = runConfigsOf(data);
  const index = configs.index.get(entry.profile_id) ?? 0;
  return `runs/${runSlug(entry.run_id)}.html#${configAnchor(index, configs.byRun.get(entry.run_id)?.length ?? 1)}`;
}
