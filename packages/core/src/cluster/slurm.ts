import os from 'node:os';
import { execa } from 'execa';

/** Slurm's own word for where a task is (PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, ...). */
export type SlurmState = string;

/** What Slurm knows about each array task, by "JOB_TASK"; `sources` says which commands answered. */
export interface SlurmView {
  tasks: Map<string, SlurmState>;
  sources: string[];
  /** Why a source had nothing to say (e.g. sacct without accounting storage). */
  notes: string[];
}

export const taskId = (jobId: string, task: number): string => `${jobId}_${task}`;

export class SlurmError extends Error {
  override name = 'SlurmError';
}

async function slurmCommand(cmd: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  try {
    const r = await execa(cmd, args, { reject: false, timeout: 60_000 });
    return { ok: r.exitCode === 0, stdout: r.stdout, stderr: r.stderr };
  } catch (error) {
    return { ok: false, stdout: '', stderr: (error as Error).message };
  }
}

/** Submits a batch script file; returns the job id sbatch printed. */
export async function sbatch(scriptFile: string): Promise<string> {
  let r;
  try {
    r = await execa('sbatch', ['--parsable', scriptFile], { reject: false, timeout: 120_000 });
  } catch (error) {
    throw new SlurmError(`sbatch could not be run (${(error as Error).message}).`);
  }
  if (r.failed && r.exitCode === undefined) {
    throw new SlurmError(
      `sbatch is not available here (${r.shortMessage}). Run pbh sweep on a Slurm login node, or add --dry-run to print the script.`,
    );
  }
  // --parsable prints "JOBID" or "JOBID;CLUSTER".
  const id = /^(\d+)(;\S+)?\s*$/m.exec(r.stdout)?.[1];
  if (r.exitCode !== 0 || id === undefined) {
    throw new SlurmError(`sbatch ${scriptFile} failed (exit ${r.exitCode}): ${(r.stderr || r.stdout).trim() || 'no output'}`);
  }
  return id;
}

/** "123_4" and, for tasks not yet split from their array record, "123_[4-6,8%2]". */
function expandTaskIds(raw: string): string[] {
  const single = /^(\d+)_(\d+)$/.exec(raw);
  if (single) return [raw];
  const range = /^(\d+)_\[([\d,-]+)(%\d+)?\]$/.exec(raw);
  if (!range) return [];
  const [, job, list] = range;
  return list!.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map(Number);
    if (a === undefined || Number.isNaN(a)) return [];
    const end = b === undefined || Number.isNaN(b) ? a : b;
    return Array.from({ length: end - a + 1 }, (_, i) => `${job}_${a + i}`);
  });
}

/**
 * "ID|STATE" lines, as `squeue -o '%i|%T'` and `sacct -P -o JobID,State` print them, to states by "JOB_TASK" for the
 * jobs in `wanted`. sacct writes "CANCELLED by 0": the first word is the state.
 */
export function parseTaskStates(stdout: string, wanted: ReadonlySet<string>): Map<string, SlurmState> {
  const tasks = new Map<string, SlurmState>();
  for (const line of stdout.split('\n')) {
    const [raw, state] = line.trim().split('|');
    if (!raw || !state) continue;
    for (const id of expandTaskIds(raw)) if (wanted.has(id.split('_')[0]!)) tasks.set(id, state.split(' ')[0]!);
  }
  return tasks;
}

/**
 * The state of every task of these jobs: squeue first (live jobs, and finished ones slurmctld still holds, for
 * MinJobAge), then sacct for the rest where the cluster keeps accounting. Neither answering is not an error: the
 * shards still say what was measured.
 */
export async function slurmView(jobIds: readonly string[]): Promise<SlurmView> {
  const view: SlurmView = { tasks: new Map(), sources: [], notes: [] };
  if (jobIds.length === 0) return view;
  const wanted = new Set(jobIds);
  // One call for the user's jobs, filtered here: squeue -j fails outright once any listed job is purged.
  const q = await slurmCommand('squeue', ['-h', '-r', '-t', 'all', '-u', os.userInfo().username, '-o', '%i|%T']);
  if (q.ok) {
    view.sources.push('squeue');
    for (const [id, state] of parseTaskStates(q.stdout, wanted)) view.tasks.set(id, state);
  } else view.notes.push(`squeue: ${q.stderr.trim().split('\n')[0] ?? 'failed'}`);
  const a = await slurmCommand('sacct', ['-n', '-P', '-X', '-j', jobIds.join(','), '-o', 'JobID,State']);
  if (a.ok) {
    view.sources.push('sacct');
    for (const [id, state] of parseTaskStates(a.stdout, wanted)) if (!view.tasks.has(id)) view.tasks.set(id, state);
  } else view.notes.push(`sacct: ${a.stderr.trim().split('\n')[0] ?? 'failed'}`);
  return view;
}
