import { readFile, writeFile } from 'node:fs/promises';
import type { MetricContext } from '../contracts/metric.js';

const CLOCK_TICKS_PER_SEC = 100;

async function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(status)?.[1];
  return kb ? Number(kb) * 1024 : NaN;
}

/** RSS in bytes of any process, from /proc/PID/status (Linux); the harness itself uses process.memoryUsage. */
export async function rssBytes(pid: number): Promise<number> {
  if (pid === process.pid) return process.memoryUsage.rss();
  return statusKb(pid, 'VmRSS');
}

/**
 * Resets the kernel's peak RSS of a process (VmHWM) to its current RSS: "5" to /proc/PID/clear_refs (Linux 4.0+).
 * False where that is not allowed or not Linux; the caller then samples instead.
 */
export async function resetPeakRss(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The kernel's peak RSS in bytes of any process since its last reset (VmHWM); NaN where /proc does not say. */
export async function peakRssBytes(pid: number): Promise<number> {
  return statusKb(pid, 'VmHWM').catch(() => NaN);
}

/** user+system CPU time in µs of any process; /proc/PID/stat counts in clock ticks (USER_HZ, 100 on Linux). */
export async function cpuTimeUs(pid: number): Promise<number> {
  if (pid === process.pid) {
    const u = process.cpuUsage();
    return u.user + u.system;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC) * 1e6;
}

/** What a session's metrics read of the process that runs the model. */
export function processMetricContext(pid: number): MetricContext {
  return {
    pid,
    sampleRssBytes: () => rssBytes(pid),
    resetPeakRss: () => resetPeakRss(pid),
    peakRssBytes: () => peakRssBytes(pid),
    cpuTimeUs: () => cpuTimeUs(pid),
  };
}
