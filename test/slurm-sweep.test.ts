import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { clusterDown, clusterLogs, clusterUp, NODES, onHead, pbhOnHead, slurmSync, taskNodes, type Cluster } from './slurm-cluster.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

// A real Slurm, not a mock: Debian's slurm-wlm, munge, slurmdbd and MariaDB as a two-node cluster on this machine
// (each slurmd in its own network and UTS namespace, so each node's jobs see their own hostname), started here and
// torn down afterwards. npm test installs the packages (scripts/ensure.mjs); a machine that cannot start the cluster
// fails this file with the reason, rather than skipping it and hiding a broken sweep.
const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
// cluster.sh starts accounting where both are installed; the test's name says which status path it covers.
const ACCOUNTING = has('slurmdbd') && has('mariadbd');
const SOURCES = ACCOUNTING ? 'squeue, sacct (slurmdbd on MariaDB) and the shards' : 'squeue and the shards (no slurmdbd here, so no sacct)';

let cluster: Cluster;

beforeAll(async () => {
  cluster = clusterUp(await tempDir('pbh-slurm-'));
  // One line in the test output that says which status path this run covered.
  console.log(`slurm-sweep: two-node cluster (${NODES.join(', ')}) up in ${cluster.upMs} ms; accounting: ${cluster.accounting}`);
});

afterAll(() => {
  if (cluster && clusterDown(cluster.dir)) rmSync(cluster.dir, { recursive: true, force: true });
});

interface StatusCell {
  index: number;
  key: string;
  state: 'pending' | 'running' | 'ok' | 'failed' | 'missing';
  task: string | null;
  slurm: string | null;
  detail: string;
  profile: { status: string; error: string | null } | null;
}

interface Status {
  cells: StatusCell[];
  slurm: { sources: string[]; notes: string[] };
}

async function status(dir: string): Promise<Status> {
  const r = await pbhOnHead(cluster.dir, ['sweep', 'status', dir, '--format', 'json']);
  if (r.code !== 0) throw new Error(`pbh sweep status failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Status;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}\n${clusterLogs(cluster.dir)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Every cell's state once nothing is pending or running any more. */
const settled = (dir: string): Promise<StatusCell[]> =>
  waitFor('every task of the sweep to end', async () => {
    const { cells } = await status(dir);
    return cells.some((c) => c.state === 'pending' || c.state === 'running') ? undefined : cells;
  });

/** Array tasks of a job slurmctld still holds, with their state and node ("JOB_TASK" -> "RUNNING pbh-node1"). */
function squeueTasks(jobId: string): Map<string, string> {
  const out = slurmSync(cluster.dir, 'squeue', ['-h', '-r', '-t', 'all', '-o', '%i|%T|%N']);
  return new Map(
    out
      .split('\n')
      .map((l) => l.trim().split('|'))
      .filter(([id]) => id?.startsWith(`${jobId}_`))
      .map(([id, state, node]) => [id!, `${state} ${node}`]),
  );
}

/** What a merge could change, in one row: counts of every table and a digest of every stored Profile. */
async function contents(db: string): Promise<Record<string, unknown>> {
  const [row] = await queryJson(
    db,
    `SELECT (SELECT count(*) FROM profiles)::INTEGER AS profiles, (SELECT count(*) FILTER (status = 'ok') FROM profiles)::INTEGER AS ok,
            (SELECT count(*) FROM runs)::INTEGER AS runs, (SELECT count(*) FROM systems)::INTEGER AS systems,
            (SELECT string_agg(DISTINCT hostname, ',' ORDER BY hostname) FROM systems) AS hosts,
            (SELECT count(*) FROM samples)::INTEGER AS samples, (SELECT count(*) FROM sessions)::INTEGER AS sessions,
            (SELECT md5(string_agg(profile_json::VARCHAR, '' ORDER BY profile_id)) FROM profiles) AS digest,
            (SELECT md5(string_agg(run_id || coalesce(finished_at::VARCHAR, ''), '' ORDER BY run_id)) FROM runs) AS run_digest`,
  );
  return row!;
}

/** Each stored Profile's cell, status and the hostname of its system record, sorted. */
const profileHosts = (db: string): Promise<{ cell_key: string; status: string; hostname: string }[]> =>
  queryJson(db, 'SELECT p.cell_key, p.status, s.hostname FROM profiles p JOIN systems s USING (system_id) ORDER BY ALL');

async function merge(shards: string, db: string): Promise<string> {
  const r = await pbh(['merge', shards, '--db', db]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

describe('pbh sweep on a real two-node Slurm cluster', () => {
  it(`spreads cells over both nodes, kills a task on one while the other finishes, resubmits and merges; status from ${SOURCES}`, async () => {
    const started = Date.now();
    expect(cluster.accounting === 'slurmdbd').toBe(ACCOUNTING);
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
      // 3 s a cell, so the task on the other node is still measuring when task 0 is cancelled.
      scenario: { kind: 'single_stream', min_query_count: 1, min_duration_ms: 3000 },
    });
    const sweepDir = path.join(dir, 'sweep');
    const shards = path.join(sweepDir, 'shards');
    const db = path.join(dir, 'results', 'pbh.duckdb');

    const dry = await pbhOnHead(cluster.dir, ['sweep', config, '--slurm', '--dir', sweepDir, '--dry-run', '--max-parallel', '2']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^#!\/bin\/bash\n/);
    expect(dry.stdout).toContain('#SBATCH --array=0-3%2\n');
    expect(dry.stdout).toContain('#SBATCH --exclusive\n');
    expect(existsSync(sweepDir)).toBe(false);

    // --exclusive: a node runs one cell at a time, so while task 0 holds one node the other node runs the rest.
    const submitted = await pbhOnHead(cluster.dir, ['sweep', config, '--slurm', '--dir', sweepDir, '--time', '10'], { PBH_FAULT_PAUSE: 'prepare:1' });
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    const jobId = submitted.stdout.trim().split('\n').at(-1)!;
    expect(jobId).toMatch(/^\d+$/);

    const heldLog = path.join(sweepDir, 'logs', `${jobId}_0.log`);
    await waitFor('task 0 to hold at its compile phase', async () =>
      existsSync(heldLog) && readFileSync(heldLog, 'utf8').includes('PBH-FAULT-PAUSED prepare:1') ? true : undefined,
    );
    expect((await status(sweepDir)).cells[0]!.state).toBe('running');
    const { heldNode, busy } = await waitFor('a task to run on the node task 0 does not hold', async () => {
      const tasks = squeueTasks(jobId);
      const heldNode = tasks.get(`${jobId}_0`)?.split(' ')[1];
      const busy = [...tasks].find(([id, s]) => id !== `${jobId}_0` && s.startsWith('RUNNING ') && s.split(' ')[1] !== heldNode);
      return heldNode !== undefined && busy !== undefined ? { heldNode, busy: { task: busy[0], node: busy[1].split(' ')[1]! } } : undefined;
    });
    expect(NODES).toContain(heldNode);
    expect(NODES).toContain(busy.node);
    const cancel = await onHead(cluster.dir, 'scancel', [`${jobId}_0`]);
    expect(cancel.stderr).toBe('');
    expect(cancel.code).toBe(0);
    // The kill landed while the other node was still running its cell, which then finishes (ok below).
    expect(squeueTasks(jobId).get(busy.task)).toBe(`RUNNING ${busy.node}`);

    const first = await settled(sweepDir);
    expect(first.map((c) => c.state).slice(1)).toEqual(['ok', 'ok', 'ok']);
    expect(first.find((c) => c.task === busy.task)?.state).toBe('ok');
    // Cancelled mid-cell: pbh records the cell in flight as failed on SIGTERM; were it killed before that, Slurm's
    // CANCELLED (or, once Slurm forgets the job without accounting, nothing at all) keeps it from counting as ok.
    expect(['failed', 'missing']).toContain(first[0]!.state);
    if (first[0]!.profile !== null) expect(first[0]!.profile.status).toBe('failed');
    expect(readdirSync(shards).filter((f) => f.endsWith('.duckdb')).sort()).toEqual(first.filter((c) => c.profile !== null).map((c) => `${c.key}.duckdb`).sort());

    // Where each task ran, from its log line; with accounting, sacct's NodeList says the same.
    const nodes = taskNodes(sweepDir);
    expect(nodes.get(`${jobId}_0`)).toBe(heldNode);
    expect(nodes.get(busy.task)).toBe(busy.node);
    expect(new Set([...nodes.values()])).toEqual(new Set(NODES));
    if (ACCOUNTING) {
      // MinJobAge=2: once slurmctld forgets the job, sweep status can only have Slurm's word from sacct.
      await waitFor('slurmctld to forget the finished job', async () => (squeueTasks(jobId).size === 0 ? true : undefined));
      const fromSacct = await status(sweepDir);
      expect(fromSacct.slurm.sources).toEqual(['squeue', 'sacct']);
      expect(fromSacct.cells.map((c) => [c.state, c.slurm])).toEqual([['failed', 'CANCELLED'], ['ok', 'COMPLETED'], ['ok', 'COMPLETED'], ['ok', 'COMPLETED']]);
      expect(fromSacct.cells[0]!.detail).toContain('CANCELLED');
      const sacct = slurmSync(cluster.dir, 'sacct', ['-n', '-P', '-X', '-j', jobId, '-o', 'JobID,NodeList']);
      expect(new Map(sacct.trim().split('\n').map((l) => l.split('|') as [string, string]))).toEqual(nodes);
    } else {
      console.log('slurm-sweep: no slurmdbd, so sweep status was checked against squeue and the shards only (not sacct)');
    }

    const mergedOut = await merge(shards, db);
    expect(mergedOut).toMatch(/merged 4 of 4 shard\(s\)|merged 3 of 3 shard\(s\)/);
    const once = await contents(db);
    expect(once).toMatchObject({ ok: 3, runs: readdirSync(shards).filter((f) => f.endsWith('.duckdb')).length, hosts: NODES.join(',') });
    // Each Profile names the node that ran its cell: its system record's hostname is that task's node.
    const nodeOfCell = (job: string, cells: StatusCell[]): Map<string, string> => new Map(cells.map((c) => [c.key, nodes.get(`${job}_${c.index}`)!]));
    const firstNodes = nodeOfCell(jobId, first);
    expect(await profileHosts(db)).toEqual(
      first
        .filter((c) => c.profile !== null)
        .map((c) => ({ cell_key: c.key, status: c.profile!.status, hostname: firstNodes.get(c.key)! }))
        .sort((a, b) => a.cell_key.localeCompare(b.cell_key) || a.status.localeCompare(b.status)),
    );
    await merge(shards, db);
    expect(await contents(db)).toEqual(once);

    const resubmitted = await pbhOnHead(cluster.dir, ['sweep', 'resubmit', sweepDir]);
    expect(resubmitted.code).toBe(0);
    expect(resubmitted.stdout).toContain('resubmitted 1 cell(s) (digits_cnn x held x b1)');
    const second = resubmitted.stdout.trim().split('\n').at(-1)!;
    expect(second).toMatch(/^\d+$/);
    expect(second).not.toBe(jobId);

    const done = await settled(sweepDir);
    expect(done.map((c) => c.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(done[0]!.task).toBe(`${second}_0`);
    const nothing = await pbhOnHead(cluster.dir, ['sweep', 'resubmit', sweepDir]);
    expect(nothing.stdout).toContain('nothing to resubmit');
    const rerunNode = taskNodes(sweepDir).get(`${second}_0`);
    expect(NODES).toContain(rerunNode);

    await merge(shards, db);
    const all = await contents(db);
    // Every Profile any task stored is there once: the cancelled attempt's failed one (if it got stored) and the rerun.
    expect(all).toMatchObject({ ok: 4, profiles: (once.profiles as number) + 1, runs: (once.runs as number) + 1, hosts: NODES.join(',') });
    const hosts = await profileHosts(db);
    expect(hosts.filter((h) => h.status === 'ok')).toEqual(
      done.map((c) => ({ cell_key: c.key, status: 'ok', hostname: c.index === 0 ? rerunNode : firstNodes.get(c.key) })).sort((a, b) => a.cell_key.localeCompare(b.cell_key)),
    );
    // One system record per node: the nodes differ only in their hostname (a commit to this repo between two tasks
    // makes a second record of a node, with the other git sha).
    const systems = await queryJson<{ hostname: string; records: number; commits: number }>(
      db,
      'SELECT hostname, count(*)::INTEGER AS records, count(DISTINCT git_sha)::INTEGER AS commits FROM systems GROUP BY hostname ORDER BY hostname',
    );
    expect(systems.map((s) => s.hostname)).toEqual([...NODES]);
    for (const s of systems) expect(s.records).toBe(s.commits);
    await merge(shards, db);
    expect(await contents(db)).toEqual(all);

    // The leaderboard ranks within hardware, not within a node: both nodes are this machine's CPU, so their
    // Profiles of one batch size are ranked against each other, best throughput first.
    const leaderboard = await queryJson<{ engine_entry: string; batch_size: number; hardware: string; rank_in_group: number; throughput_sps: number; hostname: string }>(
      db,
      `SELECT l.engine_entry, l.batch_size, l.hardware, l.rank_in_group::INTEGER AS rank_in_group, l.throughput_sps, s.hostname
       FROM leaderboard l JOIN profiles p USING (profile_id) JOIN systems s ON s.system_id = p.system_id ORDER BY l.batch_size, l.rank_in_group`,
    );
    expect(leaderboard.map((r) => [r.engine_entry, r.batch_size]).sort()).toEqual([['held', 1], ['onnxruntime', 1], ['onnxruntime', 32], ['onnxruntime', 8]]);
    expect(new Set(leaderboard.map((r) => r.hardware)).size).toBe(1);
    for (const batch of [1, 8, 32]) {
      const group = leaderboard.filter((r) => r.batch_size === batch);
      expect(group.map((r) => r.rank_in_group)).toEqual(group.map((_, i) => i + 1));
      for (const [a, b] of group.slice(1).map((r, i) => [group[i]!, r] as const)) expect(a.throughput_sps).toBeGreaterThanOrEqual(b.throughput_sps);
    }
    const b1Hosts = new Set(leaderboard.filter((r) => r.batch_size === 1).map((r) => r.hostname));
    console.log(`slurm-sweep: batch-1 group ranked across ${[...b1Hosts].join(' and ')}`);

    // The site's Machines page: one machine (the hardware both nodes share), its software table naming both hosts.
    const site = path.join(dir, 'site');
    const built = await pbh(['site', 'build', '--db', db, '--out', site], { timeoutMs: 300_000 });
    expect(built.code, built.stderr).toBe(0);
    const machines = readFileSync(path.join(site, 'machines.html'), 'utf8');
    expect(machines.match(/<section class="machine"/g)).toHaveLength(1);
    for (const node of NODES) expect(machines).toContain(`<td>${node}</td>`);

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
    console.log(`slurm-sweep: the sweep test took ${Math.round((Date.now() - started) / 1000)} s after the cluster started`);
  }, 420_000);
});
