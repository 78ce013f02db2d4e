import { existsSync } from 'node:fs';
import { StoreLockedError, StoreSchemaError, StoreUnreadableError, type ProfileSummary } from '../store/index.js';
import { openShardForReading } from '../store/read-shard.js';
import { slurmView, taskId, type SlurmView } from './slurm.js';
import { shardPath, type SweepFile } from './sweep-file.js';

export type CellState = 'pending' | 'running' | 'ok' | 'failed' | 'missing';

export interface CellStatus {
  index: number;
  key: string;
  label: string;
  state: CellState;
  /** The latest submission's task for this cell ("JOB_TASK"), if any. */
  task: string | null;
  slurm: string | null;
  /** The newest Profile of the cell in its shard. */
  profile: { id: string; status: string; error: string | null } | null;
  detail: string;
}

/** What a cell's shard holds: its Profiles, that a running task has it open, or why it cannot be read. */
export type ShardView =
  | { kind: 'absent' }
  | { kind: 'locked' }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'profiles'; profiles: ProfileSummary[] };

const PENDING = new Set(['PENDING', 'REQUEUED', 'REQUEUE_FED', 'REQUEUE_HOLD', 'RESV_DEL_HOLD', 'SPECIAL_EXIT', 'CONFIGURING']);
const RUNNING = new Set(['RUNNING', 'COMPLETING', 'SUSPENDED', 'STOPPED', 'SIGNALING', 'STAGE_OUT', 'RESIZING']);

export async function readShard(file: string): Promise<ShardView> {
  if (!existsSync(file)) return { kind: 'absent' };
  try {
    const shard = await openShardForReading(file);
    try {
      return { kind: 'profiles', profiles: await shard.store.listProfiles() };
    } finally {
      await shard.release();
    }
  } catch (error) {
    if (error instanceof StoreLockedError) return { kind: 'locked' };
    // One bad shard (half-written on a filesystem without working locks, from a newer pbh) is that cell's state,
    // not the end of the whole status.
    if (error instanceof StoreUnreadableError || error instanceof StoreSchemaError) return { kind: 'unreadable', reason: error.message };
    throw error;
  }
}

/**
 * One cell's state from what its shard holds and what Slurm says of its latest task: ok when any Profile of the
 * cell is ok; else pending/running while Slurm (or the shard's lock) says so; else failed when a Profile says
 * why or Slurm reports the task ended badly; else missing (nothing measured and nothing known: never run, or
 * ended so long ago that Slurm has forgotten it, without a Profile).
 */
export function cellStatus(index: number, key: string, label: string, task: string | null, slurm: string | null, shard: ShardView): CellStatus {
  const profiles = shard.kind === 'profiles' ? shard.profiles.filter((p) => p.cell_key === key) : [];
  const newest = profiles.at(-1);
  const profile = newest === undefined ? null : { id: newest.profile_id, status: newest.status, error: newest.error };
  const base = { index, key, label, task, slurm, profile };
  const ok = profiles.find((p) => p.status === 'ok');
  if (ok !== undefined) return { ...base, state: 'ok', detail: `Profile ${ok.profile_id}` };
  if (slurm !== null && PENDING.has(slurm)) return { ...base, state: 'pending', detail: `Slurm: ${slurm}` };
  if ((slurm !== null && RUNNING.has(slurm)) || shard.kind === 'locked') {
    return { ...base, state: 'running', detail: slurm !== null ? `Slurm: ${slurm}` : 'its shard is open in a running pbh' };
  }
  if (shard.kind === 'unreadable') return { ...base, state: 'failed', detail: `shard unreadable: ${shard.reason}${slurm ? ` (Slurm: ${slurm})` : ''}` };
  if (profile !== null) {
    return { ...base, state: 'failed', detail: `Profile ${profile.status}${profile.error ? `: ${profile.error}` : ''}${slurm ? ` (Slurm: ${slurm})` : ''}` };
  }
  if (slurm !== null && slurm !== 'COMPLETED') return { ...base, state: 'failed', detail: `Slurm: ${slurm}, no Profile stored` };
  if (slurm === 'COMPLETED') return { ...base, state: 'missing', detail: 'the task completed but its shard has no Profile of this cell' };
  return { ...base, state: 'missing', detail: task === null ? 'never submitted' : 'no Profile, and Slurm no longer knows the task' };
}

/** The latest submission that ran each cell index, as "JOB_TASK". */
function latestTasks(sweep: SweepFile): Map<number, string> {
  const latest = new Map<number, string>();
  for (const s of sweep.submissions) for (const t of s.tasks) latest.set(t, taskId(s.job_id, t));
  return latest;
}

export async function sweepStatus(sweep: SweepFile, dir: string, view?: SlurmView): Promise<{ cells: CellStatus[]; slurm: SlurmView }> {
  const slurm = view ?? (await slurmView([...new Set(sweep.submissions.map((s) => s.job_id))]));
  const latest = latestTasks(sweep);
  const cells: CellStatus[] = [];
  for (const [index, cell] of sweep.cells.entries()) {
    const task = latest.get(index) ?? null;
    const state = task === null ? null : (slurm.tasks.get(task) ?? null);
    cells.push(cellStatus(index, cell.key, cell.label, task, state, await readShard(shardPath(dir, cell.key))));
  }
  return { cells, slurm };
}
