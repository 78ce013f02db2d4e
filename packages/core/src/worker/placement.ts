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

const RESTORE = 'import os, sys\ncpus = set()\nfor part in sys.argv[2].split(","):\n    low, _, high = part.partition("-")\n    cpus.update(range(int(low), int(high or low) + 1))\nos.sched_setaffinity(int(sys.argv[1]), cpus)';

/**
 * Gives the main thread its CPUs back where a worker that placed it died before it could; Node has no call for
 * this, so a Python does it. Resolves once done, at once where nothing moved.
 */
export function restoreClientCpus(python: string): Promise<void> {
  const original = CLIENT_CPUS;
  if (original === undefined || mainThreadCpus() === original) return Promise.resolve();
  return new Promise((resolve) => {
    execFile(python, ['-c', RESTORE, String(process.pid), original], () => resolve());
  });
}
