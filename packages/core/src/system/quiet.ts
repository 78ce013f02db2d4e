import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** The window over which processes are judged quiet, and the share of one core they may use in it. */
export const QUIET_WINDOW_MS = 10;
export const QUIET_CORE_SHARE = 0.25;

/**
 * CPU time in ns a process has run, all its threads: each thread's /proc/PID/task/TID/schedstat (ns), else its
 * /proc/PID/stat utime + stime (clock ticks, 10 ms each); null where neither can be read (not Linux, or it exited).
 * Synchronous on purpose: the harness is idle while it polls, and the libuv pool's reads would be CPU in its process.
 */
export function processCpuNs(pid: number, procRoot = '/proc'): number | null {
  try {
    let ns = 0;
    for (const tid of readdirSync(`${procRoot}/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`${procRoot}/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // A thread that ended between the listing and the read ran nothing more.
      }
    }
    if (Number.isFinite(ns) && ns > 0) return ns;
  } catch {
    // No task listing or no schedstat (a kernel without CONFIG_SCHED_INFO): fall back to the stat ticks.
  }
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 1e7;
  } catch {
    return null;
  }
}

export interface QuietWait {
  /** ms waited until the processes were quiet, or until the limit. */
  waitedMs: number;
  /** False when the limit came first: the processes were still busy. */
  quiet: boolean;
}

/**
 * Waits until `pids` together use under QUIET_CORE_SHARE of a core over a QUIET_WINDOW_MS window, at most `maxMs`.
 * A runtime's thread pool can spin long after its session ends (TVM's workers yield 300,000 times before they sleep,
 * 100-400 ms here), taking a core from whichever contender is timed next (docs/measurements.md). Processes that cannot
 * be read (gone, or not Linux) count as quiet.
 */
export async function waitQuiet(pids: readonly number[], maxMs: number, now: () => number = () => performance.now()): Promise<QuietWait> {
  const start = now();
  const total = (): number => pids.reduce((a, pid) => a + (processCpuNs(pid) ?? 0), 0);
  for (;;) {
    const before = total();
    const t0 = now();
    await sleep(QUIET_WINDOW_MS);
    const windowMs = now() - t0;
    const busyMs = (total() - before) / 1e6;
    if (busyMs < QUIET_CORE_SHARE * windowMs) return { waitedMs: now() - start, quiet: true };
    if (now() - start >= maxMs) return { waitedMs: now() - start, quiet: false };
  }
}
