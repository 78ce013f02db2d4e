import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Dataset } from '../contracts/dataset.js';
import type { Profile } from '../contracts/profile.js';
import { expandCells, type Cell } from '../config/keys.js';
import type { LoadedExperiment } from '../config/load.js';
import { loadDataset } from '../dataset/load.js';
import { createRegistry } from '../plugins/registry.js';
import { DISK_FULL, openStore, StoreFullError, StoreLockedError } from '../store/index.js';
import type { StoredCell } from '../store/store.js';
import { collectSystemInfo } from '../system/info.js';
import { findVenvPython } from '../worker/venv.js';
import { blankProfile } from './assemble.js';
import { runGenerate } from './cell.js';
import { groupKey, runGroup, type GroupHooks } from './group.js';
import { scenarioSettings } from './scenarios/settings.js';
import { terminalSafe } from '../text/terminal.js';
import { Watchdog, WATCHDOG_GRACE_MS } from './watchdog.js';
import type { SweepContext } from './context.js';
import { Deadline } from './deadline.js';
import type { ProgressSink } from './progress.js';
import { ReferenceOutputs } from './reference.js';
import { staleBecause } from './resume.js';
import { claimScratch, removeOrphanScratch } from './scratch.js';

/**
 * The sweep's cells as groups that run together (harness/group.ts): one model, batch size and scenario across engines
 * and precisions, in the order the config lists them; each cell alone with rounds.interleave false or a generate workload.
 */
export function sweepGroups(ctx: SweepContext, cells: readonly Cell[]): Cell[][] {
  const exp = ctx.loaded.experiment;
  if (!exp.rounds.interleave || exp.generate) return cells.map((c) => [c]);
  const groups = new Map<string, Cell[]>();
  for (const cell of cells) {
    const kind = scenarioSettings(exp, cell).kind;
    // Server and offline plan their sessions as one schedule: each cell is its own group.
    const key = kind === 'server' || kind === 'offline' ? `\0${cell.key}` : groupKey(cell, kind);
    groups.set(key, [...(groups.get(key) ?? []), cell]);
  }
  return [...groups.values()];
}

export interface SweepOptions {
  loaded: LoadedExperiment;
  dbPath: string;
  resume: boolean;
  /** Run only these cell keys (the reproduce command of one Profile). */
  only?: string[];
  progress?: ProgressSink;
  /** Shell-quoted command prefix used in each Profile's reproduce command. */
  commandPrefix: string;
}

export interface SweepResult {
  runId: string;
  profiles: Profile[];
  skippedByResume: number;
  /** Cells stored ok that --resume ran again, each with why (its configuration, model, dataset or engine changed). */
  rerunByResume: string[];
  /** The signal that stopped the sweep after recording the cell in flight, if one did. */
  interrupted: NodeJS.Signals | null;
  /** Profiles the store refused, each kept as a JSON file beside the database with the store's reason. */
  unstored: { profileId: string; file: string; error: string }[];
  /** Why the run could not be closed (finished_at, the checkpoint), said with what to do; null when it closed. */
  closeError: string | null;
}

/** A store that could not close: on a full disk its committed Profiles are in the write-ahead log, replayed on the next open. */
function storeClosingError(dbPath: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (DISK_FULL.test(message)) {
    return `the disk holding ${dbPath} is full (${message.split('\n')[0]}). Profiles stored before that are safe in ${dbPath}.wal, which DuckDB replays into ${dbPath} the next time it is opened, and any it refused are kept as JSON (listed above): free space there, then run npx pbh query "SELECT count(*) FROM profiles" --db ${dbPath} to fold the log in.`;
  }
  return `${dbPath} could not be closed: ${message.split('\n')[0]}. The Profiles stored above are in ${dbPath}.wal if DuckDB wrote them there; open it again (npx pbh query ... --db ${dbPath}) to fold them in.`;
}

/** How long a run waits for a database another process holds: a reader (pbh sweep status, pbh query) holds it briefly. */
const LOCK_WAIT_MS = 5_000;

/**
 * Opens the run's database, waiting up to LOCK_WAIT_MS while another process holds it: `pbh sweep status` reads every
 * shard for milliseconds, and a Slurm task starting in that moment would otherwise fail its cell. A run that holds it
 * longer is still refused, naming it.
 */
async function openWaiting(dbPath: string): Promise<Awaited<ReturnType<typeof openStore>>> {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return await openStore(dbPath);
    } catch (e) {
      if (!(e instanceof StoreLockedError) || Date.now() >= until) throw e;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Where a refused Profile may be kept, in order: beside the database, else (that disk full) the temp folder, else home. */
function unstoredFolders(dbPath: string): string[] {
  const name = path.basename(dbPath);
  return [`${dbPath}.unstored`, path.join(os.tmpdir(), `pbh-unstored-${name}`), path.join(os.homedir(), '.cache', 'pbh', `unstored-${name}`)];
}

/**
 * A Profile the store refused goes to `<db>.unstored/<profile id>.json`, so nothing measured is lost; where that disk
 * is full (the likely reason the store refused it) the next folder that takes the whole file, never an empty one.
 * Where none does, the JSON goes to stderr, for the user to keep.
 */
async function keepUnstored(dbPath: string, profile: Profile, error: unknown): Promise<{ profileId: string; file: string; error: string }> {
  const reason = error instanceof Error ? error.message : String(error);
  // Non-finite numbers and BigInts are not JSON: written as strings so the file shows what the Profile held.
  const json = JSON.stringify(
    { store_error: reason, profile },
    (_k, v: unknown) => (typeof v === 'bigint' || (typeof v === 'number' && !Number.isFinite(v)) ? String(v) : v),
    2,
  );
  for (const dir of unstoredFolders(dbPath)) {
    const file = path.join(dir, `${profile.profile_id}.json`);
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(file, json);
      return { profileId: profile.profile_id, file, error: reason };
    } catch {
      await rm(file, { force: true }).catch(() => undefined);
    }
  }
  process.stderr.write(`pbh: no folder could take Profile ${profile.profile_id}; here it is whole, keep it:\n${json}\n`);
  return { profileId: profile.profile_id, file: '(stderr)', error: reason };
}

/**
 * Arms the watchdog for one cell: should the cell hold the harness's thread WATCHDOG_GRACE_MS past its timeout, its
 * timeout Profile is kept beside the database (as a refused Profile is) before the process is ended.
 */
function armWatchdog(watchdog: Watchdog, dbPath: string, ctx: SweepContext, cell: Cell, timeoutS: number, endsAtMs: number): void {
  const profile = blankProfile(ctx, cell);
  profile.status = 'timeout';
  profile.error =
    `cell ${cell.model.name} x ${cell.engineLabel} x batch ${cell.batchSize} held the harness's thread ${WATCHDOG_GRACE_MS / 1000} s past its timeout of ${timeoutS} s ` +
    `(an in-process engine that blocks in a call, e.g. a busy loop in predict): PBH ended the process. Cells of earlier groups are stored; ` +
    `the other contenders of its group, resident beside it for interleaved rounds, are not: rerun with --resume (rounds: { interleave: false } runs each cell alone).`;
  const file = path.join(`${dbPath}.unstored`, `${profile.profile_id}.json`);
  watchdog.arm(endsAtMs + WATCHDOG_GRACE_MS, file, JSON.stringify({ store_error: 'the process was ended by the watchdog', profile }, null, 2), `pbh: ${terminalSafe(profile.error)} Its timeout Profile is kept as ${file}.`);
}

/**
 * Runs every cell of the sweep in order, one Profile per cell, each stored in its own transaction as soon as it
 * exists, so Ctrl-C or a crash never loses what was measured. SIGINT stops after the cell in flight is recorded.
 */
export async function runSweep(opts: SweepOptions): Promise<SweepResult> {
  const exp = opts.loaded.experiment;
  const store = await openWaiting(opts.dbPath);
  const runId = randomUUID();
  for (const orphan of await removeOrphanScratch(opts.dbPath)) {
    const closed = await store.closeKilledRun(orphan.runId);
    process.stderr.write(
      `pbh: run ${orphan.runId} (started ${orphan.startedAt}) in ${opts.dbPath} was killed before it finished: its scratch folder ${orphan.folder} is removed; the Profiles it stored stay${closed ? ", and the run is closed as killed (runs.ended)" : ''}.\n`,
    );
  }
  const workRoot = await claimScratch(runId, opts.dbPath);
  // Every contender of the group in flight holds a deadline: a signal interrupts them all.
  const deadlines = new Set<Deadline>();
  let interrupted: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted) process.exit(signal === 'SIGTERM' ? 143 : 130);
    interrupted = signal;
    process.stderr.write(`\nInterrupted (${signal}): recording the cells in flight, then stopping (${signal === 'SIGINT' ? 'Ctrl-C' : 'the signal'} again to quit at once).\n`);
    for (const d of deadlines) d.interrupt(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const profiles: Profile[] = [];
  const unstored: SweepResult['unstored'] = [];
  const watchdog = new Watchdog();
  let skippedByResume = 0;
  const rerunByResume: string[] = [];
  let closeError: unknown;
  let diskFull: unknown;
  try {
    const registry = await createRegistry(exp.plugins, opts.loaded.dir);
    const system = await collectSystemInfo({ python: findVenvPython()?.python });
    await store
      .beginRun({ run_id: runId, name: exp.name, started_at: new Date().toISOString(), config: opts.loaded.raw, command: opts.commandPrefix, system })
      .catch((e: unknown) => {
        const message = e instanceof Error ? e.message : String(e);
        if (!DISK_FULL.test(message)) throw e;
        throw new StoreFullError(`the disk holding ${opts.dbPath} is full, so no run was started and nothing was measured: free space there (or pass --db on another disk) and run again.`, { cause: e });
      });
    let dataset: Dataset | Error;
    try {
      dataset = await loadDataset(exp.dataset, opts.loaded.dir);
    } catch (e) {
      dataset = e as Error;
    }
    const ctx: SweepContext = {
      runId,
      loaded: opts.loaded,
      registry,
      system,
      dataset,
      models: new Map(),
      probes: new Map(),
      reference: new ReferenceOutputs(registry, exp.reference_engine, workRoot, exp.seed, exp.engines.find((e) => e.name === exp.reference_engine)?.process),
      workRoot,
      command: (key) => `${opts.commandPrefix} --only ${key}`,
      onProgress: (e) => (e.kind === 'phase' ? opts.progress?.phase(e.phase) : opts.progress?.session(e.index, e.of)),
    };
    let cells = expandCells(exp);
    if (opts.only?.length) cells = cells.filter((c) => opts.only!.includes(c.key));
    const stored = opts.resume ? await store.okCells() : new Map<string, StoredCell>();
    const todo: Cell[] = [];
    for (const cell of cells) {
      const was = stored.get(cell.key);
      const why = was ? await staleBecause(ctx, cell, was) : null;
      if (was && why === null) continue;
      if (why !== null) rerunByResume.push(`${cell.model.name} x ${cell.engineLabel} x b${cell.batchSize}: ${why}`);
      todo.push(cell);
    }
    skippedByResume = cells.length - todo.length;
    const store1 = async (cell: Cell, profile: Profile): Promise<void> => {
      try {
        if (diskFull) throw diskFull;
        await store.writeProfile(profile);
      } catch (e) {
        // After a commit failed for want of space, DuckDB may abort the process on the next write: none is tried.
        if (!diskFull && DISK_FULL.test(e instanceof Error ? e.message : String(e))) diskFull = e;
        const kept = await keepUnstored(opts.dbPath, profile, e);
        unstored.push(kept);
        process.stderr.write(
          `pbh: the store refused Profile ${kept.profileId} (${terminalSafe(`${cell.model.name} x ${cell.engineLabel} x b${cell.batchSize}`)}): ${terminalSafe(kept.error)}\n  kept as ${kept.file}; the sweep goes on.\n`,
        );
      }
      profiles.push(profile);
    };
    const position = new Map(todo.map((c, i) => [c, i]));
    const label = (cell: Cell): string => `${cell.model.name} x ${cell.engineLabel} x b${cell.batchSize}`;
    const hooks: GroupHooks = {
      deadlineFor: (cell) => {
        const d = new Deadline(exp.timeout_s, `cell ${cell.model.name} x ${cell.engineLabel} x batch ${cell.batchSize}`);
        deadlines.add(d);
        return d;
      },
      guard: async (cell, d, op) => {
        armWatchdog(watchdog, opts.dbPath, ctx, cell, exp.timeout_s, d.endsAtMs);
        try {
          return await op();
        } finally {
          watchdog.disarm();
        }
      },
      onContender: (cell) => opts.progress?.cellStart(position.get(cell)!, todo.length, label(cell)),
      interrupted: () => interrupted !== null,
    };
    for (const group of sweepGroups(ctx, todo)) {
      if (interrupted) break;
      let done: Profile[];
      if (exp.generate) {
        const cell = group[0]!;
        const d = hooks.deadlineFor(cell);
        hooks.onContender!(cell, 'stage');
        done = [await hooks.guard!(cell, d, () => runGenerate(ctx, cell, d))];
      } else {
        done = await runGroup(ctx, group, hooks);
      }
      deadlines.clear();
      for (const profile of done) {
        const cell = group.find((c) => c.key === profile.cell_key)!;
        await store1(cell, profile);
        opts.progress?.cellStart(position.get(cell)!, todo.length, label(cell));
        opts.progress?.cellEnd(profile);
      }
    }
    await ctx.reference.release().catch(() => undefined);
    if (diskFull) closeError ??= diskFull;
    else await store.finishRun(runId, undefined, interrupted ? 'interrupted' : 'finished').catch((e: unknown) => (closeError ??= e));
  } finally {
    await watchdog.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    opts.progress?.done();
    // Closing checkpoints the write-ahead log into the file; on a full disk that fails with the Profiles safe in the log.
    await store.close({ checkpoint: diskFull === undefined }).catch((e: unknown) => (closeError ??= e));
    await rm(workRoot, { recursive: true, force: true }).catch(() => undefined);
  }
  return { runId, profiles, skippedByResume, rerunByResume, interrupted, unstored, closeError: closeError === undefined ? null : storeClosingError(opts.dbPath, closeError) };
}
