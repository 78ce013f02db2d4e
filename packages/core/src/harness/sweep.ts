import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Dataset } from '../contracts/dataset.js';
import type { Profile } from '../contracts/profile.js';
import { expandCells } from '../config/keys.js';
import type { LoadedExperiment } from '../config/load.js';
import { loadDataset } from '../dataset/load.js';
import { createRegistry } from '../plugins/registry.js';
import { openStore } from '../store/index.js';
import { collectSystemInfo } from '../system/info.js';
import { findVenvPython } from '../worker/venv.js';
import { runCell } from './cell.js';
import type { SweepContext } from './context.js';
import { Deadline } from './deadline.js';
import type { ProgressSink } from './progress.js';
import { ReferenceOutputs } from './reference.js';

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
  interrupted: boolean;
}

/**
 * Runs every cell of the sweep in order, one Profile per cell, each stored in its own transaction as soon as it
 * exists, so Ctrl-C or a crash never loses what was measured. SIGINT stops after the cell in flight is recorded.
 */
export async function runSweep(opts: SweepOptions): Promise<SweepResult> {
  const exp = opts.loaded.experiment;
  const store = await openStore(opts.dbPath);
  const runId = randomUUID();
  const workRoot = path.join(os.tmpdir(), `pbh-${runId}`);
  let deadline: Deadline | undefined;
  let interrupted = false;
  const onSigint = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write('\nInterrupted: recording the cell in flight, then stopping (Ctrl-C again to quit at once).\n');
    deadline?.interrupt();
  };
  process.on('SIGINT', onSigint);
  const profiles: Profile[] = [];
  let skippedByResume = 0;
  try {
    const registry = await createRegistry(exp.plugins, opts.loaded.dir);
    const system = await collectSystemInfo({ python: findVenvPython()?.python });
    await store.beginRun({
      run_id: runId,
      name: exp.name,
      started_at: new Date().toISOString(),
      config: opts.loaded.raw,
      command: opts.commandPrefix,
      system,
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
      reference: new ReferenceOutputs(registry, exp.reference_engine, workRoot, exp.seed),
      workRoot,
      command: (key) => `${opts.commandPrefix} --only ${key}`,
      onProgress: (e) => (e.kind === 'phase' ? opts.progress?.phase(e.phase) : opts.progress?.session(e.index, e.of)),
    };
    let cells = expandCells(exp);
    if (opts.only?.length) cells = cells.filter((c) => opts.only!.includes(c.key));
    const done = opts.resume ? await store.okCellKeys() : new Set<string>();
    const todo = cells.filter((c) => !done.has(c.key));
    skippedByResume = cells.length - todo.length;
    for (const [i, cell] of todo.entries()) {
      if (interrupted) break;
      opts.progress?.cellStart(i, todo.length, `${cell.model.name} x ${cell.engineLabel} x b${cell.batchSize}`);
      deadline = new Deadline(exp.timeout_s, `cell ${cell.model.name} x ${cell.engineLabel} x batch ${cell.batchSize}`);
      const profile = await runCell(ctx, cell, deadline);
      await store.writeProfile(profile);
      profiles.push(profile);
      opts.progress?.cellEnd(profile);
    }
    await ctx.reference.release().catch(() => undefined);
    await store.finishRun(runId);
  } finally {
    process.off('SIGINT', onSigint);
    opts.progress?.done();
    await store.close();
    await rm(workRoot, { recursive: true, force: true }).catch(() => undefined);
  }
  return { runId, profiles, skippedByResume, interrupted };
}
