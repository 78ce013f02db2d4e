import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { openStore, type ProfileStore } from '../store/index.js';
import { readHistoryPoints, type HistoryPoint } from '../history/points.js';

/** A BASELINE or CANDIDATE that names nothing in the database, or more than one thing: the message lists what is there. */
export class CompareSpecError extends Error {
  override name = 'CompareSpecError';
}

/** What one side of `pbh compare` stands for, and its Profiles. */
export interface ResolvedSide {
  spec: string;
  /** In words: "run 3f2a… (demo) in results/pbh.duckdb", "commit b4a01d4 (2 runs) in …", "results/other.duckdb". */
  description: string;
  points: HistoryPoint[];
}

const looksLikeFile = (spec: string): boolean => existsSync(spec) && statSync(spec).isFile();

/** Reads every Profile of a database once: both sides of one database share the read. */
export class PointSource {
  private readonly cache = new Map<string, Promise<HistoryPoint[]>>();

  async points(file: string): Promise<HistoryPoint[]> {
    const key = path.resolve(file);
    let read = this.cache.get(key);
    if (!read) {
      read = (async () => {
        const store: ProfileStore = await openStore(file, { readOnly: true });
        try {
          return await readHistoryPoints(store);
        } finally {
          await store.close();
        }
      })();
      this.cache.set(key, read);
    }
    return read;
  }
}

function runChoices(points: readonly HistoryPoint[]): string {
  const runs = new Map<string, HistoryPoint>();
  for (const p of points) runs.set(p.run_id, p);
  const latest = [...runs.values()].sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, 8);
  return latest.map((p) => `${p.run_id}${p.run_name ? ` (${p.run_name})` : ''}${p.git_sha ? ` at ${p.git_sha.slice(0, 10)}` : ''}, ${p.created_at}`).join('\n  ');
}

/**
 * BASELINE / CANDIDATE: a database file (each cell's newest ok Profile in it), `run:ID` or a run id or its unique
 * prefix, or `commit:SHA` or a commit (prefix) that runs recorded as their git_sha: every run of that commit.
 */
export async function resolveSide(spec: string, db: string, source: PointSource): Promise<ResolvedSide> {
  if (!spec.startsWith('run:') && !spec.startsWith('commit:') && looksLikeFile(spec)) {
    return { spec, description: spec, points: await source.points(spec) };
  }
  const points = await source.points(db);
  const [kind, value] = spec.startsWith('run:') ? ['run', spec.slice(4)] : spec.startsWith('commit:') ? ['commit', spec.slice(7)] : ['any', spec];
  if (value === '') throw new CompareSpecError(`"${spec}" names no run or commit: put an id after the colon.`);
  const runIds = [...new Set(points.map((p) => p.run_id))];
  const runs = kind === 'commit' ? [] : runIds.includes(value) ? [value] : runIds.filter((id) => id.startsWith(value));
  const commitRuns = kind === 'run' ? [] : [...new Set(points.filter((p) => p.git_sha?.toLowerCase().startsWith(value.toLowerCase())).map((p) => p.run_id))];
  const commits = [...new Set(points.filter((p) => commitRuns.includes(p.run_id)).map((p) => p.git_sha!))];
  if (runs.length === 1 && (commitRuns.length === 0 || kind === 'run' || runs[0] === value)) {
    const run = points.find((p) => p.run_id === runs[0])!;
    return { spec, description: `run ${run.run_id}${run.run_name ? ` (${run.run_name})` : ''} in ${db}`, points: points.filter((p) => p.run_id === run.run_id) };
  }
  if (commits.length === 1 && runs.length === 0) {
    return { spec, description: `commit ${commits[0]} (${commitRuns.length} run${commitRuns.length === 1 ? '' : 's'}) in ${db}`, points: points.filter((p) => commitRuns.includes(p.run_id)) };
  }
  const why =
    runs.length + commits.length === 0
      ? `"${spec}" is not a database file, and no run id${kind === 'run' ? '' : ' or recorded commit'} in ${db} starts with "${value}"`
      : `"${spec}" is ambiguous in ${db}: it starts ${runs.length} run id(s) (${runs.slice(0, 4).join(', ')}) and ${commits.length} commit(s) (${commits.slice(0, 4).join(', ')}); give more of it, or say run:${value} or commit:${value}`;
  throw new CompareSpecError(`${why}.\nRuns there, newest first:\n  ${runChoices(points) || '(none)'}`);
}
