import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expandCells } from '../config/keys.js';
import { loadExperiment, type LoadedExperiment } from '../config/load.js';
import { sweepStatus, type CellStatus } from './cell-status.js';
import { renderSbatchScript } from './sbatch-script.js';
import { sbatch, SlurmError } from './slurm.js';
import { logsDir, readSweepFile, shardsDir, SWEEP_FILE, SweepFileError, writeSweepFile, type SlurmOptions, type SweepFile } from './sweep-file.js';

/** pbh's own CLI, which every task runs: dist/cli/main.js beside this module's folder. */
const PBH_CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));

async function sha256Of(file: string): Promise<string> {
  return createHash('sha256').update(await readFile(file)).digest('hex');
}

/** Whether the sweep's config file is gone or no longer the one submitted (its cells may differ now). */
export async function configChanged(sweep: SweepFile): Promise<boolean> {
  return !existsSync(sweep.config) || (await sha256Of(sweep.config)) !== sweep.config_sha256;
}

/** The sweep a config gives, before anything is submitted: one array task per cell, in expandCells' order. */
export async function planSweep(loaded: LoadedExperiment, slurm: SlurmOptions): Promise<SweepFile> {
  const cells = expandCells(loaded.experiment).map((c) => ({ key: c.key, label: `${c.model.name} x ${c.engineLabel} x b${c.batchSize}` }));
  if (cells.length === 0) throw new SweepFileError(`${loaded.file} has no cells to run (every cell is excluded): nothing to submit.`);
  return {
    version: 1,
    name: loaded.experiment.name,
    config: path.resolve(loaded.file),
    config_sha256: await sha256Of(loaded.file),
    cwd: process.cwd(),
    created_at: new Date().toISOString(),
    node: process.execPath,
    pbh: PBH_CLI,
    slurm,
    cells,
    submissions: [],
  };
}

/**
 * Submits array tasks `tasks` (cell indices) of the sweep in `dir` as one array job: the folders first (Slurm
 * does not create the log folder, and a task without it never starts), the script kept as submit-<n>.sbatch,
 * the job id recorded in sweep.json once sbatch accepted it.
 */
export async function submitTasks(dir: string, sweep: SweepFile, tasks: number[]): Promise<{ jobId: string; script: string; sweep: SweepFile }> {
  await mkdir(shardsDir(dir), { recursive: true });
  await mkdir(logsDir(dir), { recursive: true });
  await writeSweepFile(dir, sweep);
  const script = renderSbatchScript(sweep, dir, tasks);
  const file = path.join(dir, `submit-${sweep.submissions.length + 1}.sbatch`);
  await writeFile(file, script, { mode: 0o755 });
  const jobId = await sbatch(file);
  const next: SweepFile = { ...sweep, submissions: [...sweep.submissions, { job_id: jobId, tasks, submitted_at: new Date().toISOString() }] };
  await writeSweepFile(dir, next);
  return { jobId, script: file, sweep: next };
}

export async function startSweep(loaded: LoadedExperiment, dir: string, slurm: SlurmOptions): Promise<{ jobId: string; script: string; sweep: SweepFile }> {
  if (existsSync(path.join(dir, SWEEP_FILE))) {
    throw new SweepFileError(`${dir} already holds a sweep (${SWEEP_FILE}): see it with pbh sweep status ${dir}, rerun what is not ok with pbh sweep resubmit ${dir}, or pass another --dir.`);
  }
  const sweep = await planSweep(loaded, slurm);
  try {
    return await submitTasks(dir, sweep, sweep.cells.map((_, i) => i));
  } catch (error) {
    if (!(error instanceof SlurmError)) throw error;
    throw new SlurmError(`${error.message}\nThe sweep folder ${dir} is kept with no job: once sbatch works here, pbh sweep resubmit ${dir} submits every cell.`);
  }
}

export interface Resubmission {
  jobId: string | null;
  tasks: CellStatus[];
  /** Not ok but still pending or running: left alone, not submitted twice. */
  inFlight: CellStatus[];
}

/**
 * Submits every cell without an ok Profile that is not pending or running. The config must still hold those
 * cells: a task runs `pbh run CONFIG --only KEY`, and a key the config no longer gives would run nothing.
 */
export async function resubmit(dir: string): Promise<Resubmission> {
  const sweep = await readSweepFile(dir);
  const { cells } = await sweepStatus(sweep, dir);
  const todo = cells.filter((c) => c.state === 'failed' || c.state === 'missing');
  const inFlight = cells.filter((c) => c.state === 'pending' || c.state === 'running');
  if (todo.length === 0) return { jobId: null, tasks: [], inFlight };
  if (await configChanged(sweep)) {
    const keys = new Set(expandCells((await loadExperiment(sweep.config)).experiment).map((c) => c.key));
    const gone = todo.filter((c) => !keys.has(c.key));
    if (gone.length > 0) {
      throw new SweepFileError(
        `${sweep.config} changed since the sweep was submitted and no longer gives ${gone.length} of the cells to rerun ` +
          `(${gone.map((c) => c.label).join(', ')}): restore the config, or start a new sweep with pbh sweep CONFIG --slurm --dir ANOTHER.`,
      );
    }
  }
  const { jobId } = await submitTasks(dir, sweep, todo.map((c) => c.index));
  return { jobId, tasks: todo, inFlight };
}
