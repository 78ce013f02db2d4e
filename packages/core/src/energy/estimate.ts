import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { z } from 'zod';
import type { TdpFacts } from '../contracts/energy.js';
import { monotonicSeconds, type DomainWindow, type EnergyReader, type EnergyReaderPlugin, type OpenedReader } from './reader.js';

/** /proc/PID/stat after the command's closing parenthesis: state, then 50-odd numbers; utime and stime are the 12th and 13th. */
const StatTail = z.string().regex(/^\S( -?\d+){12}/, 'a /proc/PID/stat line');

/** user + system CPU ticks of one process (every thread, live and reaped), from /proc/PID/stat. */
export async function processCpuTicks(pid: number, procRoot = '/proc'): Promise<number> {
  const stat = await readFile(`${procRoot}/${pid}/stat`, 'utf8');
  const tail = StatTail.parse(stat.slice(stat.lastIndexOf(')') + 2));
  const fields = tail.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** USER_HZ, the unit of /proc's CPU times: getconf says; 100 is what Linux uses on every mainstream architecture. */
export async function clockTicksPerSecond(): Promise<number> {
  try {
    const { stdout } = await promisify(execFile)('getconf', ['CLK_TCK']);
    const hz = Number(stdout.trim());
    return Number.isInteger(hz) && hz > 0 ? hz : 100;
  } catch {
    return 100;
  }
}

/** Joules the estimate charges for CPU ticks: CPU seconds times the TDP's share of one logical CPU. */
export function estimatedJoules(ticks: number, ticksPerSecond: number, tdp: TdpFacts): number {
  return (ticks / ticksPerSecond) * tdp.watts_per_thread;
}

/**
 * The estimate for CPUs without a counter: the measured processes' CPU time (the harness and the model's process)
 * times the TDP per logical CPU. It charges a core-second the same whatever the core did, so it is labelled
 * estimated_tdp wherever it shows.
 */
export class TdpEstimateReader implements EnergyReader {
  readonly name = 'tdp';
  private pids: readonly number[] = [];
  private startTicks = new Map<number, number>();
  private startedAt = 0;

  constructor(
    readonly tdp: TdpFacts,
    readonly ticksPerSecond: number,
    private readonly procRoot = '/proc',
  ) {}

  private async ticks(): Promise<Map<number, number>> {
    const read = await Promise.all(this.pids.map(async (pid) => [pid, await processCpuTicks(pid, this.procRoot).catch(() => NaN)] as const));
    return new Map(read);
  }

  async begin(pids: readonly number[]): Promise<void> {
    this.pids = [...new Set(pids)];
    this.startedAt = monotonicSeconds();
    this.startTicks = await this.ticks();
  }

  async poll(): Promise<void> {}

  async end(): Promise<DomainWindow[]> {
    const after = await this.ticks();
    const seconds = monotonicSeconds() - this.startedAt;
    const lost = this.pids.filter((pid) => !Number.isFinite(this.startTicks.get(pid)!) || !Number.isFinite(after.get(pid)!));
    const ticks = this.pids.reduce((a, pid) => a + (lost.includes(pid) ? 0 : after.get(pid)! - this.startTicks.get(pid)!), 0);
    const base = { name: 'cpu', kind: 'cpu', device: 'cpu', counted: false, method: 'estimated_tdp', seconds, ticks, updatePeriodS: 1 / this.ticksPerSecond } as const;
    if (lost.length) return [{ ...base, joules: null, ticks: null, reason: `/proc/${lost.join(', /proc/')}/stat could not be read at the session's start and end: the process ended` }];
    if (ticks === 0) return [{ ...base, joules: null, reason: `the measured processes (pids ${this.pids.join(', ')}) used less than one CPU clock tick (${(1000 / this.ticksPerSecond).toFixed(0)} ms) in ${seconds.toFixed(3)} s` }];
    return [{ ...base, joules: estimatedJoules(ticks, this.ticksPerSecond, this.tdp), reason: null }];
  }

  async close(): Promise<void> {}
}

export function tdpEstimatePlugin(tdp: TdpFacts | { unavailable: string }, procRoot = '/proc'): EnergyReaderPlugin {
  return {
    name: 'tdp',
    async open(): Promise<OpenedReader> {
      if ('unavailable' in tdp) return tdp;
      try {
        await readFile(`${procRoot}/self/stat`, 'utf8');
      } catch {
        return { unavailable: `${procRoot}/self/stat cannot be read (not Linux): the estimate needs the processes' CPU time` };
      }
      return { reader: new TdpEstimateReader(tdp, await clockTicksPerSecond(), procRoot) };
    },
  };
}
