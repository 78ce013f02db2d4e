import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { CliResult } from './helpers.js';
import { PBH_BIN, ROOT } from './suite.js';

/**
 * The two-node test cluster of scripts/slurm/cluster.sh, as test/slurm-sweep.test.ts drives it: `up` and `down`,
 * and commands run on its head namespace (the login node), the only place sbatch, squeue, scancel and sacct reach
 * slurmctld and slurmdbd (their 10.77.0.x addresses exist only inside the cluster's namespaces).
 */
export const CLUSTER = path.join(ROOT, 'scripts', 'slurm', 'cluster.sh');
export const NODES = ['pbh-node1', 'pbh-node2'] as const;

export interface Cluster {
  dir: string;
  /** "slurmdbd", or "none (why)" where slurmdbd or MariaDB is not installed. */
  accounting: string;
  upMs: number;
}

export function clusterUp(dir: string): Cluster {
  const started = Date.now();
  const up = spawnSync('bash', [CLUSTER, 'up', dir], { encoding: 'utf8', timeout: 180_000 });
  if (up.status !== 0) {
    throw new Error(
      `test/slurm-sweep.test.ts runs against a real two-node Slurm cluster and could not start one ` +
        `(${CLUSTER} up ${dir} exited ${up.status ?? up.signal}):\n${up.stderr}\n` +
        'It needs root (network and UTS namespaces) and the Debian packages slurm-wlm, munge, slurmdbd, mariadb-server ' +
        'and iproute2, which npm test installs through apt (scripts/ensure.mjs).',
    );
  }
  return { dir, accounting: /^ACCOUNTING=(.*)$/m.exec(up.stdout)?.[1] ?? 'unknown', upMs: Date.now() - started };
}

export function clusterDown(dir: string): boolean {
  return spawnSync('bash', [CLUSTER, 'down', dir], { stdio: 'inherit', timeout: 120_000 }).status === 0;
}

/** A command on the head namespace, with the cluster's SLURM_CONF; resolves when it exits. */
export function onHead(dir: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [CLUSTER, 'exec', dir, cmd, ...args], { cwd: ROOT, env: { ...process.env, FORCE_COLOR: '0', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** pbh as a user on the login node runs it: `pbh sweep` and its status and resubmit call Slurm's commands. */
export const pbhOnHead = (dir: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> => onHead(dir, process.execPath, [PBH_BIN, ...args], env);

/** A Slurm command's stdout on the head namespace; throws with its stderr when it fails. */
export function slurmSync(dir: string, cmd: string, args: string[]): string {
  const r = spawnSync('bash', [CLUSTER, 'exec', dir, cmd, ...args], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

/** The node each array task ran on, from the first line the sbatch script writes ("... on HOST at TIME"). */
export function taskNodes(sweepDir: string): Map<string, string> {
  const nodes = new Map<string, string>();
  const logs = path.join(sweepDir, 'logs');
  if (!existsSync(logs)) return nodes;
  for (const file of readdirSync(logs)) {
    const task = /^(\d+_\d+)\.log$/.exec(file)?.[1];
    const host = / on (\S+) at /.exec(readFileSync(path.join(logs, file), 'utf8'))?.[1];
    if (task !== undefined && host !== undefined) nodes.set(task, host);
  }
  return nodes;
}

/** The last lines of the cluster's daemon logs, for a failure message: why Slurm did not run a task. */
export function clusterLogs(dir: string): string {
  const logs = path.join(dir, 'log');
  if (!existsSync(logs)) return '';
  return readdirSync(logs)
    .filter((f) => f.endsWith('.log'))
    .map((f) => `--- ${path.join(logs, f)}\n${readFileSync(path.join(logs, f), 'utf8').split('\n').slice(-15).join('\n')}`)
    .join('\n');
}
