import { readFile } from 'node:fs/promises';
import type { Interference } from '../contracts/profile.js';

/**
 * Other processes' share of the machine's CPU (plus steal) at or above which a Profile is marked busy. Measured on
 * this project's 2-vCPU hosts: alone, a cell's sessions see 0-4% (daemons, the kernel's own threads); beside one
 * core-bound process, about half of the machine.
 */
export const BUSY_SHARE = 0.1;

/** Machine-wide and the measured processes' CPU ticks (USER_HZ) at one moment. */
export interface CpuSnapshot {
  totalTicks: number;
  busyTicks: number;
  stealTicks: number;
  /** user + system ticks of the measured processes (the harness and the model's process). */
  ownTicks: number;
  loadAvg1m: number;
}

/** One session's share of the machine, in ticks, kept so that a Profile's figure weighs sessions by their length. */
export interface SessionInterference {
  index: number;
  totalTicks: number;
  otherTicks: number;
  stealTicks: number;
  loadAvg1m: number;
}

async function processTicks(procRoot: string, pid: number): Promise<number> {
  const stat = await readFile(`${procRoot}/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Reads /proc/stat's cpu line, /proc/loadavg and each pid's stat; null where /proc is not there (not Linux). */
export async function cpuSnapshot(pids: readonly number[], procRoot = '/proc'): Promise<CpuSnapshot | null> {
  let stat: string;
  let loadavg: string;
  try {
    [stat, loadavg] = await Promise.all([readFile(`${procRoot}/stat`, 'utf8'), readFile(`${procRoot}/loadavg`, 'utf8')]);
  } catch {
    return null;
  }
  const cpu = stat.split('\n').find((l) => l.startsWith('cpu '));
  if (!cpu) return null;
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = cpu.trim().split(/\s+/).slice(1, 9).map(Number) as number[];
  const own = await Promise.all([...new Set(pids)].map((pid) => processTicks(procRoot, pid).catch(() => 0)));
  return {
    totalTicks: user! + nice! + system! + idle! + iowait! + irq! + softirq! + (steal ?? 0),
    busyTicks: user! + nice! + system! + irq! + softirq!,
    stealTicks: steal ?? 0,
    ownTicks: own.reduce((a, b) => a + b, 0),
    loadAvg1m: Number(loadavg.split(' ')[0]),
  };
}

export function sessionInterference(index: number, start: CpuSnapshot, end: CpuSnapshot): SessionInterference {
  const busy = end.busyTicks - start.busyTicks;
  const own = end.ownTicks - start.ownTicks;
  return {
    index,
    totalTicks: end.totalTicks - start.totalTicks,
    // Per-task and per-CPU accounting tick apart, so a quiet machine can read slightly below zero.
    otherTicks: Math.max(0, busy - own),
    stealTicks: end.stealTicks - start.stealTicks,
    loadAvg1m: end.loadAvg1m,
  };
}

const share = (part: number, total: number): number => (total > 0 ? part / total : 0);

/** The Profile's interference: sessions weighed by their ticks, busy at BUSY_SHARE. Null when none was measured. */
export function summarizeInterference(sessions: SessionInterference[], threshold = BUSY_SHARE): Interference | null {
  if (sessions.length === 0) return null;
  const total = sessions.reduce((a, s) => a + s.totalTicks, 0);
  const other = share(sessions.reduce((a, s) => a + s.otherTicks, 0), total);
  const steal = share(sessions.reduce((a, s) => a + s.stealTicks, 0), total);
  return {
    other_cpu_share: other,
    steal_share: steal,
    load_avg_1m: sessions.at(-1)!.loadAvg1m,
    busy: other + steal >= threshold,
    threshold,
    sessions: sessions.map((s) => ({
      index: s.index,
      other_cpu_share: share(s.otherTicks, s.totalTicks),
      steal_share: share(s.stealTicks, s.totalTicks),
      load_avg_1m: s.loadAvg1m,
    })),
  };
}
