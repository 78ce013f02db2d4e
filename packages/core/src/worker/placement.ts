import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * The CPUs this process's main thread may run on, as the kernel lists them ("0-3,6"), read before any worker moved it.
 * A worker pins the client's main thread off its own while runs come through the shared page beside a runtime that
 * pins threads (pbh_worker/placement.py), and gives these back before any other command or when it exits.
 */
export const CLIENT_CPUS = mainThreadCpus();

function mainThreadCpus(): string | undefined {
  try {
    return /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  } catch {
    // Not Linux: no worker places anything.
    return undefined;
  }
}

/**
 * Gives the main thread its CPUs back where a worker that placed it died before it could; Node has no call for
 * this, so a Python does it (`pythonPath` holds `pbh_worker`). Resolves once done, at once where nothing moved.
 */
export function restoreClientCpus(python: string, pythonPath: string): Promise<void> {
  const original = CLIENT_CPUS;
  if (original === undefined || mainThreadCpus() === original) return Promise.resolve();
  const script = 'import sys\nfrom pbh_worker.placement import set_cpus\nset_cpus(int(sys.argv[1]), sys.argv[2])';
  return new Promise((resolve) => {
    execFile(python, ['-c', script, String(process.pid), original], { env: { ...process.env, PYTHONPATH: pythonPath } }, () => resolve());
  });
}
