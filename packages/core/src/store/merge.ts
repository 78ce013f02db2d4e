import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { canonicalJson } from '../encoding/canonical-json.js';
import { readRunRecords, type RunRecord } from './run-records.js';
import { openShardForReading } from './read-shard.js';
import { openStore, type ProfileStore } from './store.js';

/** The merge was asked for something it cannot do as given (no shards, the target among them): nothing was written. */
export class MergeInputError extends Error {
  override name = 'MergeInputError';
}

/** Two different records claiming one id: the one already in the target, and the one a shard brought. */
export interface MergeConflict {
  kind: 'profile' | 'run';
  id: string;
  /** The file the stored record came from: an earlier shard of this merge, or the target itself. */
  storedFrom: string;
  shard: string;
}

export interface ShardMerge {
  file: string;
  runsAdded: number;
  /** Runs already in the target unfinished that the shard has finished. */
  runsFinished: number;
  profilesAdded: number;
  /** Profiles already in the target with the same content (merged before): stored once. */
  profilesPresent: number;
  /** Profiles of a run that conflicts (see MergeResult.conflicts): left out, so none is filed under another run. */
  profilesRefused: number;
}

export interface MergeResult {
  target: string;
  shards: ShardMerge[];
  conflicts: MergeConflict[];
  /** True when shouldStop ended the merge between two Profiles; a rerun completes it. */
  stopped: boolean;
}

export interface MergeOptions {
  target: string;
  shards: string[];
  /** Asked between Profiles (Ctrl-C): true stops after the Profile in hand is committed. */
  shouldStop?: () => boolean;
  onShard?: (merged: ShardMerge) => void;
}

const canonical = (file: string): string => (existsSync(file) ? realpathSync(file) : resolve(file));

function sameRun(a: RunRecord, b: RunRecord): boolean {
  const { finished_at: _a, ended: _ea, ...startA } = a;
  const { finished_at: _b, ended: _eb, ...startB } = b;
  return canonicalJson(startA) === canonicalJson(startB);
}

/**
 * Folds shard databases into `target` through the store's own reader and writer (getProfile / writeProfile,
 * beginRun / finishRun), so a later schema needs no change here. Every shard is opened read-only first, so one
 * that is locked, unreadable or of a newer schema stops the merge before anything is written (an older one is read
 * through a migrated copy, openShardForReading). Each Profile is its own transaction and a Profile already stored
 * with the same content is skipped: the same shards merged twice change nothing, and a merge interrupted anywhere
 * is completed by running it again. A Profile or run whose id is stored with different content is a conflict
 * naming both files; the merge goes on with the rest.
 */
export async function mergeShards(opts: MergeOptions): Promise<MergeResult> {
  const target = canonical(opts.target);
  const shards = [...new Set(opts.shards.map(canonical))];
  if (shards.length === 0) throw new MergeInputError('pbh merge needs at least one shard database to merge.');
  if (shards.includes(target)) {
    throw new MergeInputError(`${target} is both the target (--db) and one of the shards: a database cannot be merged into itself.`);
  }
  for (const shard of shards) await (await openShardForReading(shard)).release();

  const store = await openStore(target);
  const result: MergeResult = { target, shards: [], conflicts: [], stopped: false };
  try {
    const runs = new Map((await readRunRecords(store)).map((run) => [run.run_id, { run, from: target }]));
    const profiles = new Map((await store.listProfiles()).map((p) => [p.profile_id, target]));
    for (const file of shards) {
      if (opts.shouldStop?.()) {
        result.stopped = true;
        break;
      }
      const shard = await openShardForReading(file);
      try {
        const merged = await mergeOne(store, shard.store, file, runs, profiles, result.conflicts, opts.shouldStop);
        result.shards.push(merged.report);
        opts.onShard?.(merged.report);
        if (merged.stopped) {
          result.stopped = true;
          break;
        }
      } finally {
        await shard.release();
      }
    }
  } finally {
    await store.close();
  }
  return result;
}

async function mergeOne(
  store: ProfileStore,
  shard: ProfileStore,
  /** The shard's own path (the store may be a migrated copy of it). */
  file: string,
  runs: Map<string, { run: RunRecord; from: string }>,
  profiles: Map<string, string>,
  conflicts: MergeConflict[],
  shouldStop: (() => boolean) | undefined,
): Promise<{ report: ShardMerge; stopped: boolean }> {
  const report: ShardMerge = { file, runsAdded: 0, runsFinished: 0, profilesAdded: 0, profilesPresent: 0, profilesRefused: 0 };
  const conflictingRuns = new Set<string>();
  // Runs first: a Profile is stored only once its run is recorded.
  for (const run of await readRunRecords(shard)) {
    const stored = runs.get(run.run_id);
    if (stored === undefined) {
      const { finished_at, ended, ...start } = run;
      await store.beginRun(start);
      if (finished_at !== null) await store.finishRun(run.run_id, finished_at, ended ?? 'finished');
      runs.set(run.run_id, { run, from: file });
      report.runsAdded += 1;
    } else if (!sameRun(stored.run, run)) {
      conflicts.push({ kind: 'run', id: run.run_id, storedFrom: stored.from, shard: file });
      conflictingRuns.add(run.run_id);
    } else if (stored.run.finished_at === null && run.finished_at !== null) {
      // A merge interrupted between beginRun and finishRun, or a shard merged while its run was still going.
      await store.finishRun(run.run_id, run.finished_at, run.ended ?? 'finished');
      stored.run = run;
      report.runsFinished += 1;
    }
  }
  for (const summary of await shard.listProfiles()) {
    if (shouldStop?.()) return { report, stopped: true };
    const id = summary.profile_id;
    const profile = await shard.getProfile(id);
    if (profile === undefined) continue;
    const storedFrom = profiles.get(id);
    if (storedFrom !== undefined) {
      const stored = await store.getProfile(id);
      if (stored !== undefined && canonicalJson(stored) === canonicalJson(profile)) report.profilesPresent += 1;
      else conflicts.push({ kind: 'profile', id, storedFrom, shard: file });
      continue;
    }
    // A Profile of a conflicting run would be filed under another run's record.
    if (conflictingRuns.has(profile.run_id)) {
      report.profilesRefused += 1;
      continue;
    }
    await store.writeProfile(profile);
    profiles.set(id, file);
    report.profilesAdded += 1;
  }
  return { report, stopped: false };
}

/** One line per conflict, naming both files, for the CLI. */
export function describeConflict(c: MergeConflict, target: string): string {
  const where = c.storedFrom === target ? `already stored in ${target}` : `merged from ${c.storedFrom}`;
  const table = c.kind === 'run' ? 'runs WHERE run_id' : 'profiles WHERE profile_id';
  const left = c.kind === 'run' ? ' (the shard\'s Profiles of that run were not merged either)' : '';
  return `${c.kind} ${c.id} in ${c.shard} differs from the ${c.kind} with that id ${where}; the stored one was kept${left}. ` +
    `Ids must be unique: compare the two with pbh query "SELECT * FROM ${table} = '${c.id}'" --db FILE.`;
}
