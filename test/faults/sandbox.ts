// What every fault-suite file shares: a sandbox per case (its own cwd, TMPDIR and database), the Profiles a store holds
// after the fault, and the table of cases each file prints: exit, Profiles expected and found, files changed outside
// the database and --out, pbh scratch left in TMPDIR.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { changedPaths, snapshotTree, type TreeSnapshot } from '../file-snapshot.js';
import { pbh, tempDir, type CliResult, type PbhOptions } from '../helpers.js';
import { suiteData, suiteModel } from '../suite.js';

/** PBH_FAULTS=full (npm run faults) runs every case; npm test runs the quick part. */
export const FULL = process.env.PBH_FAULTS === 'full';

export interface Row {
  name: string;
  exit: string;
  profilesExpected: number;
  profilesFound: number;
  /** Files added, removed or changed outside the database and --out: the suite fails unless this is empty. */
  changed: string[];
  /**
   * Entries left in the run's TMPDIR by pbh's own scratch folders (pbh-<run id>), which a SIGKILL leaves no chance to
   * remove: for a SIGKILL case, counted after the next run, which removes a dead run's scratch. onnxruntime's native
   * library also writes .ses and mat-debug-<pid>.log there on every run; those are its own.
   */
  tempLeft: number;
}
export const rows: Row[] = [];
/** Every folder the file's cases made, removed once its table is printed. */
export const made: string[] = [];

/** One case's folder: cwd `work/`, TMPDIR `tmp/`, the database `results/pbh.duckdb`, a site in `site/`. */
export interface Sandbox {
  root: string;
  work: string;
  tmp: string;
  db: string;
  before: TreeSnapshot;
}

export const OWN = ['results/pbh.duckdb', 'results/pbh.duckdb.wal', 'tmp', 'site'];

/** `prepare` writes what the case starts from (configs, bad databases); the snapshot is taken after it. */
export async function sandbox(name: string, prepare?: (s: Omit<Sandbox, 'before'>) => unknown): Promise<Sandbox> {
  const root = await tempDir(`pbh-fault-${name.replace(/\W+/g, '-').slice(0, 40)}-`);
  made.push(root);
  const s = { root, work: path.join(root, 'work'), tmp: path.join(root, 'tmp'), db: path.join(root, 'results', 'pbh.duckdb') };
  for (const folder of [s.work, s.tmp, path.dirname(s.db)]) mkdirSync(folder, { recursive: true });
  await prepare?.(s);
  return { ...s, before: snapshotTree(root, OWN) };
}

export function inSandbox(s: Sandbox, args: string[], opts: PbhOptions = {}): Promise<CliResult> {
  return pbh(args, { ...opts, cwd: s.work, env: { TMPDIR: s.tmp, ...opts.env } });
}

export function exitOf(r: CliResult): string {
  return r.signal ? r.signal : String(r.code);
}

export type Stored = { batch_size: number; status: string; error: string | null };

/** The Profiles a readable store holds (and that it is readable: pbh query exits 0); [] where the file is not a store. */
export async function storedProfiles(s: Sandbox): Promise<Stored[]> {
  if (!existsSync(s.db)) return [];
  const r = await inSandbox(s, ['query', 'SELECT batch_size, status, error FROM profiles ORDER BY batch_size', '--db', s.db, '--format', 'json']);
  expect(r.code, `the database is readable after the fault: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as Stored[];
}

export function record(s: Sandbox, name: string, exit: string, profilesExpected: number, profilesFound: number): Row {
  const scratch = [...snapshotTree(s.tmp).keys()].filter((entry) => entry.startsWith('pbh-')).length;
  const row = { name, exit, profilesExpected, profilesFound, changed: changedPaths(s.before, snapshotTree(s.root, OWN)), tempLeft: scratch };
  rows.push(row);
  return row;
}

/** Prints the file's table of cases (its result), then removes every folder its cases made. For afterAll. */
export function printTable(title: string, hasQuickPart = false): void {
  const header = ['case', 'exit', 'Profiles expected', 'Profiles found', 'files changed outside db/--out', 'pbh scratch left in TMPDIR'];
  const body = rows.map((r) => [r.name, r.exit, String(r.profilesExpected), String(r.profilesFound), String(r.changed.length), String(r.tempLeft)]);
  const sum = (pick: (r: Row) => number): string => String(rows.reduce((a, r) => a + pick(r), 0));
  const total = [`${rows.length} cases tried${hasQuickPart && !FULL ? ' (quick part; npm run faults runs all)' : ''}`, '', sum((r) => r.profilesExpected), sum((r) => r.profilesFound), sum((r) => r.changed.length), sum((r) => r.tempLeft)];
  const widths = header.map((h, i) => Math.max(h.length, ...[...body, total].map((r) => r[i]!.length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const changes = rows.flatMap((r) => r.changed.map((c) => `  ${r.name}: ${c}`));
  for (const root of made) rmSync(root, { recursive: true, force: true });
  console.log(['', title, line(header), rule, ...body.map(line), rule, line(total), ...(changes.length ? ['files changed outside the database and --out:', ...changes] : [])].join('\n'));
}

export const digits = { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 32 };
export const workload = { warmup_batches: 1, sessions: 2, scorers: ['top1'] };

/** The cell most cases start from: the bundled digits CNN on onnxruntime at batch 8. */
export function oneCell(): Record<string, unknown> {
  return {
    name: 'one',
    dataset: digits,
    models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
    engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }],
    batch_sizes: [8],
    ...workload,
  };
}
