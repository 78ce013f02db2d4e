import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

// A real Slurm, not a mock: Debian's slurm-wlm and munge as a one-node cluster on this machine, started here and torn
// down afterwards. npm test installs the packages (scripts/ensure.mjs); a machine that cannot start the cluster fails
// this file with the reason, rather than skipping it and hiding a broken sweep.
const CLUSTER = path.join(ROOT, 'scripts', 'slurm', 'cluster.sh');
let clusterDir: string;
let slurmEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  clusterDir = await tempDir('pbh-slurm-');
  // A port of its own, so a real slurmctld on this machine or a leftover test cluster is not in the way.
  const port = String(20_000 + Math.floor(Math.random() * 20_000));
  const up = spawnSync('bash', [CLUSTER, 'up', clusterDir], { env: { ...process.env, PBH_SLURM_PORT: port }, encoding: 'utf8', timeout: 120_000 });
  if (up.status !== 0) {
    throw new Error(
      `test/slurm-sweep.test.ts runs against a real one-node Slurm cluster and could not start one ` +
        `(${CLUSTER} up ${clusterDir} exited ${up.status ?? up.signal}):\n${up.stderr}\n` +
        'It needs root and the Debian packages slurm-wlm and munge, which npm test installs through apt (scripts/ensure.mjs).',
    );
  }
  slurmEnv = { SLURM_CONF: path.join(clusterDir, 'slurm.conf') };
});

afterAll(() => {
  if (!clusterDir) return;
  const down = spawnSync('bash', [CLUSTER, 'down', clusterDir], { stdio: 'inherit', timeout: 60_000 });
  if (down.status === 0) rmSync(clusterDir, { recursive: true, force: true });
});

interface StatusCell {
  index: number;
  key: string;
  state: 'pending' | 'running' | 'ok' | 'failed' | 'missing';
  task: string | null;
  detail: string;
  profile: { status: string; error: string | null } | null;
}

async function status(dir: string): Promise<StatusCell[]> {
  const r = await pbh(['sweep', 'status', dir, '--format', 'json'], { env: slurmEnv });
  if (r.code !== 0) throw new Error(`pbh sweep status failed (${r.code}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { cells: StatusCell[] }).cells;
}

/** The last lines of the cluster's daemon logs, for a failure message: why Slurm did not run a task. */
function clusterLogs(): string {
  const logs = path.join(clusterDir, 'log');
  if (!existsSync(logs)) return '';
  return readdirSync(logs)
    .map((f) => `--- ${path.join(logs, f)}\n${readFileSync(path.join(logs, f), 'utf8').split('\n').slice(-15).join('\n')}`)
    .join('\n');
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}\n${clusterLogs()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Every cell's state once nothing is pending or running any more. */
const settled = (dir: string): Promise<StatusCell[]> =>
  waitFor('every task of the sweep to end', async () => {
    const cells = await status(dir);
    return cells.some((c) => c.state === 'pending' || c.state === 'running') ? undefined : cells;
  });

/** What a merge could change, in one row: counts of every table and a digest of every stored Profile. */
async function contents(db: string): Promise<Record<string, unknown>> {
  const [row] = await queryJson(
    db,
    `SELECT (SELECT count(*) FROM profiles)::INTEGER AS profiles, (SELECT count(*) FILTER (status = 'ok') FROM profiles)::INTEGER AS ok,
            (SELECT count(*) FROM runs)::INTEGER AS runs, (SELECT count(*) FROM systems)::INTEGER AS systems,
            (SELECT string_agg(DISTINCT hostname, ',') FROM systems) AS hosts,
            (SELECT count(*) FROM samples)::INTEGER AS samples, (SELECT count(*) FROM sessions)::INTEGER AS sessions,
            (SELECT md5(string_agg(profile_json::VARCHAR, '' ORDER BY profile_id)) FROM profiles) AS digest,
            (SELECT md5(string_agg(run_id || coalesce(finished_at::VARCHAR, ''), '' ORDER BY run_id)) FROM runs) AS run_digest`,
  );
  return row!;
}

async function merge(shards: string, db: string): Promise<string> {
  const r = await pbh(['merge', shards, '--db', db]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

describe('pbh sweep on a real one-node Slurm cluster', () => {
  it('runs a sweep to the end, shows a cancelled task as not ok, resubmits it, and merges without loss', async () => {
    const dir = await tempDir('pbh-sweep-');
    const config = await writeConfig(dir, 'sweep.yaml', {
      name: 'slurm-sweep',
      dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 32 },
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
      // "held" is onnxruntime that waits at its compile phase for a signal while PBH_FAULT_PAUSE is set: the task
      // that scancel ends is known to be mid-cell.
      engines: [
        { name: 'onnxruntime_paused', label: 'held', options: { intraOpNumThreads: 1 } },
        { name: 'onnxruntime', options: { intraOpNumThreads: 1 } },
      ],
      plugins: [path.join(ROOT, 'test', 'fixtures', 'pause-onnx-plugin.mjs')],
      batch_sizes: [1, 8, 32],
      exclude: [{ engine: 'held', batch_size: 8 }, { engine: 'held', batch_size: 32 }],
      warmup_batches: 1,
      sessions: 1,
      scorers: ['top1'],
      scenario: { kind: 'single_stream', min_query_count: 1, min_duration_ms: 0 },
    });
    const sweepDir = path.join(dir, 'sweep');
    const shards = path.join(sweepDir, 'shards');
    const db = path.join(dir, 'results', 'pbh.duckdb');

    const dry = await pbh(['sweep', config, '--slurm', '--dir', sweepDir, '--dry-run', '--max-parallel', '2'], { env: slurmEnv });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^#!\/bin\/bash\n/);
    expect(dry.stdout).toContain('#SBATCH --array=0-3%2\n');
    expect(dry.stdout).toContain('#SBATCH --exclusive\n');
    expect(existsSync(sweepDir)).toBe(false);

    const submitted = await pbh(['sweep', config, '--slurm', '--dir', sweepDir, '--time', '10'], { env: { ...slurmEnv, PBH_FAULT_PAUSE: 'prepare:1' } });
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    const jobId = submitted.stdout.trim().split('\n').at(-1)!;
    expect(jobId).toMatch(/^\d+$/);

    const heldLog = path.join(sweepDir, 'logs', `${jobId}_0.log`);
    await waitFor('task 0 to hold at its compile phase', async () =>
      existsSync(heldLog) && readFileSync(heldLog, 'utf8').includes('PBH-FAULT-PAUSED prepare:1') ? true : undefined,
    );
    expect((await status(sweepDir))[0]!.state).toBe('running');
    const cancel = spawnSync('scancel', [`${jobId}_0`], { env: { ...process.env, ...slurmEnv }, encoding: 'utf8' });
    expect(cancel.stderr).toBe('');
    expect(cancel.status).toBe(0);

    const first = await settled(sweepDir);
    expect(first.map((c) => c.state).slice(1)).toEqual(['ok', 'ok', 'ok']);
    // Cancelled mid-cell: pbh records the cell in flight as failed on SIGTERM; were it killed before that, Slurm's
    // CANCELLED (or, once Slurm forgets the job, nothing at all) still keeps it from counting as ok.
    expect(['failed', 'missing']).toContain(first[0]!.state);
    if (first[0]!.profile !== null) expect(first[0]!.profile.status).toBe('failed');
    expect(readdirSync(shards).filter((f) => f.endsWith('.duckdb')).sort()).toEqual(first.filter((c) => c.profile !== null).map((c) => `${c.key}.duckdb`).sort());

    const mergedOut = await merge(shards, db);
    expect(mergedOut).toMatch(/merged 4 of 4 shard\(s\)|merged 3 of 3 shard\(s\)/);
    const once = await contents(db);
    // One node: every system record is this machine's (a commit between two runs makes a second record of it).
    expect(once).toMatchObject({ ok: 3, runs: readdirSync(shards).filter((f) => f.endsWith('.duckdb')).length, hosts: os.hostname() });
    await merge(shards, db);
    expect(await contents(db)).toEqual(once);

    const resubmitted = await pbh(['sweep', 'resubmit', sweepDir], { env: slurmEnv });
    expect(resubmitted.code).toBe(0);
    expect(resubmitted.stdout).toContain('resubmitted 1 cell(s) (digits_cnn x held x b1)');
    const second = resubmitted.stdout.trim().split('\n').at(-1)!;
    expect(second).toMatch(/^\d+$/);
    expect(second).not.toBe(jobId);

    const done = await settled(sweepDir);
    expect(done.map((c) => c.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(done[0]!.task).toBe(`${second}_0`);
    const nothing = await pbh(['sweep', 'resubmit', sweepDir], { env: slurmEnv });
    expect(nothing.stdout).toContain('nothing to resubmit');

    await merge(shards, db);
    const all = await contents(db);
    // Every Profile any task stored is there once: the cancelled attempt's failed one (if it got stored) and the rerun.
    expect(all).toMatchObject({ ok: 4, profiles: (once.profiles as number) + 1, runs: (once.runs as number) + 1, hosts: os.hostname() });
    await merge(shards, db);
    expect(await contents(db)).toEqual(all);
    const leaderboard = await queryJson<{ engine_entry: string; batch_size: number }>(db, 'SELECT engine_entry, batch_size FROM leaderboard ORDER BY engine_entry, batch_size');
    expect(leaderboard).toEqual([
      { engine_entry: 'held', batch_size: 1 },
      { engine_entry: 'onnxruntime', batch_size: 1 },
      { engine_entry: 'onnxruntime', batch_size: 8 },
      { engine_entry: 'onnxruntime', batch_size: 32 },
    ]);

    // A copy of a shard with one Profile changed under its id, and one from a newer pbh: the first is a conflict
    // naming both files (exit 2), the second is refused before anything is written (exit 3).
    const shardFile = path.join(shards, `${done[1]!.key}.duckdb`);
    const changed = path.join(dir, 'changed.duckdb');
    const newer = path.join(dir, 'newer.duckdb');
    for (const [file, sql] of [
      [changed, `UPDATE profiles SET profile_json = json_merge_patch(profile_json, '{"error_detail": "edited"}')`],
      [newer, `INSERT INTO schema_version (version, description) VALUES (999, 'from a newer pbh')`],
    ] as const) {
      copyFileSync(shardFile, file);
      const instance = await DuckDBInstance.create(file);
      const connection = await instance.connect();
      await connection.run(sql);
      connection.closeSync();
      instance.closeSync();
    }
    const conflict = await pbh(['merge', changed, '--db', db]);
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toContain(`in ${changed} differs from the profile with that id already stored in ${db}`);
    const refused = await pbh(['merge', shards, newer, '--db', db]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`${newer} has schema v999, newer than this pbh`);
    expect(await contents(db)).toEqual(all);
    // 50 s to 2 minutes on this 2-core machine, depending on the other work on it (load average 12 for the latter).
  }, 300_000);
});
