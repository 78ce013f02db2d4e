import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { EnergyDomain } from '../contracts/energy.js';
import { monotonicSeconds, type DomainWindow, type EnergyReader, type EnergyReaderPlugin, type OpenedReader } from './reader.js';

/** The kernel's powercap class (Documentation/power/powercap/powercap.rst). */
export const POWERCAP_ROOT = '/sys/class/powercap';

/**
 * Intel's SDM documents the energy status MSRs as updated about once a millisecond; powercap does not say, so it is
 * used only when a short spin at open sees no update (a test tree, an idle package).
 */
export const RAPL_DOCUMENTED_PERIOD_S = 0.001;
const PERIOD_SPIN_MS = 30;

/** sysfs holds one decimal number and a newline; anything else is a foreign file. */
const Microjoules = z.string().regex(/^\d+\n?$/, 'a whole number of microjoules').transform((s) => Number(s.trim()));
const ZoneName = z.string().regex(/^[\w-]+\n?$/, 'a zone name').transform((s) => s.trim());

export interface RaplZone {
  /** package-0, core-0, uncore-0, dram-0, psys-1 */
  domain: string;
  kind: EnergyDomain['kind'];
  dir: string;
  maxRangeUj: number;
}

/** Why a zone's file could not be read, and what to do, in words. */
export function readFailure(file: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EACCES' || code === 'EPERM') {
    return `${file} is readable by root only (Linux 5.10+, after CVE-2020-8694): run pbh as root or grant read access, e.g. sudo chmod o+r ${path.dirname(path.dirname(file))}/intel-rapl:*/energy_uj`;
  }
  if (code === 'ENOENT') return `${file} is missing: the zone has no energy counter`;
  return `${file} could not be read (${error instanceof z.ZodError ? z.prettifyError(error) : code ?? (error as Error).message})`;
}

async function readUj(file: string): Promise<number> {
  return Microjoules.parse(await readFile(file, 'utf8'));
}

/** Energy between two readings of a counter that restarts from 0 past max_energy_range_uj (one wrap at most between reads). */
export function counterDelta(previous: number, current: number, maxRangeUj: number): number {
  return current >= previous ? current - previous : current + (maxRangeUj - previous);
}

const KIND: Record<string, EnergyDomain['kind']> = { package: 'package', core: 'core', uncore: 'uncore', dram: 'dram', psys: 'psys' };

/**
 * Every RAPL zone under the powercap root: top-level `intel-rapl:N` (package-N, or psys) and their subzones
 * `intel-rapl:N:M` (core, uncore, dram of that socket). `intel-rapl-mmio` zones are left out: they carry the same
 * package counter through MMIO, and counting both would count the package twice.
 */
export async function raplZones(root: string): Promise<{ zones: RaplZone[]; problems: string[] }> {
  const entries = (await readdir(root)).filter((e) => /^intel-rapl:\d+(:\d+)?$/.test(e)).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const zones: RaplZone[] = [];
  const problems: string[] = [];
  const socketOf = new Map<string, string>();
  for (const entry of entries) {
    const dir = path.join(root, entry);
    let name: string;
    try {
      name = ZoneName.parse(await readFile(path.join(dir, 'name'), 'utf8'));
    } catch (e) {
      problems.push(readFailure(path.join(dir, 'name'), e));
      continue;
    }
    const [, top, sub] = /^intel-rapl:(\d+)(?::(\d+))?$/.exec(entry)!;
    const base = name.replace(/-\d+$/, '');
    const kind = KIND[base];
    if (!kind) {
      problems.push(`${dir}: zone "${name}" is not a RAPL domain PBH knows (package, core, uncore, dram, psys)`);
      continue;
    }
    // A subzone belongs to its parent's socket: intel-rapl:1:0 named "core" is core-1 when intel-rapl:1 is package-1.
    const socket = sub === undefined ? (/-(\d+)$/.exec(name)?.[1] ?? top!) : (socketOf.get(top!) ?? top!);
    if (sub === undefined) socketOf.set(top!, socket);
    let maxRangeUj: number;
    try {
      maxRangeUj = await readUj(path.join(dir, 'max_energy_range_uj'));
    } catch (e) {
      problems.push(readFailure(path.join(dir, 'max_energy_range_uj'), e));
      continue;
    }
    zones.push({ domain: `${base}-${socket}`, kind, dir, maxRangeUj });
  }
  return { zones, problems };
}

/** Package and DRAM make a socket's total; core and uncore are parts of package, psys covers the platform. */
const COUNTED = new Set<EnergyDomain['kind']>(['package', 'dram']);

interface ZoneState {
  zone: RaplZone;
  last: number | null;
  totalUj: number;
  error: string | null;
}

/** A short spin on the first package's counter: the interval between the updates it sees, else null. */
async function measuredPeriod(zone: RaplZone | undefined): Promise<number | null> {
  if (!zone) return null;
  const file = path.join(zone.dir, 'energy_uj');
  const changes: number[] = [];
  let last = await readUj(file).catch(() => null);
  const until = monotonicSeconds() + PERIOD_SPIN_MS / 1000;
  while (last !== null && monotonicSeconds() < until && changes.length < 6) {
    const v = await readUj(file).catch(() => null);
    if (v !== null && v !== last) changes.push(monotonicSeconds());
    last = v;
  }
  return changes.length >= 3 ? (changes.at(-1)! - changes[0]!) / (changes.length - 1) : null;
}

export class RaplReader implements EnergyReader {
  readonly name = 'rapl';
  private states: ZoneState[] = [];
  private startedAt = 0;

  constructor(
    readonly zones: readonly RaplZone[],
    /** Seconds between counter updates: measured at open, else RAPL_DOCUMENTED_PERIOD_S. */
    readonly updatePeriodS: number,
  ) {}

  private async read(s: ZoneState): Promise<void> {
    if (s.error) return;
    const file = path.join(s.zone.dir, 'energy_uj');
    try {
      const v = await readUj(file);
      if (s.last !== null) s.totalUj += counterDelta(s.last, v, s.zone.maxRangeUj);
      s.last = v;
    } catch (e) {
      s.error = readFailure(file, e);
    }
  }

  async begin(): Promise<void> {
    this.states = this.zones.map((zone) => ({ zone, last: null, totalUj: 0, error: null }));
    this.startedAt = monotonicSeconds();
    await Promise.all(this.states.map((s) => this.read(s)));
  }

  async poll(): Promise<void> {
    await Promise.all(this.states.map((s) => this.read(s)));
  }

  async end(): Promise<DomainWindow[]> {
    await this.poll();
    const seconds = monotonicSeconds() - this.startedAt;
    const ticks = Math.floor(seconds / this.updatePeriodS);
    return this.states.map(({ zone, totalUj, error }) => ({
      name: zone.domain,
      kind: zone.kind,
      device: 'cpu',
      counted: COUNTED.has(zone.kind),
      method: 'rapl',
      // Microjoules are summed as whole numbers (exact below 2^53) and turned into joules once.
      joules: error || totalUj === 0 ? null : totalUj / 1e6,
      seconds,
      ticks,
      updatePeriodS: this.updatePeriodS,
      reason: error ?? (totalUj === 0 ? `${path.join(zone.dir, 'energy_uj')} did not move in ${seconds.toFixed(3)} s: the domain reports nothing on this CPU` : null),
    }));
  }

  async close(): Promise<void> {}
}

/** RAPL through powercap sysfs: every readable zone, or why none is. */
export function raplPlugin(root = POWERCAP_ROOT): EnergyReaderPlugin {
  return {
    name: 'rapl',
    async open(): Promise<OpenedReader> {
      let found: Awaited<ReturnType<typeof raplZones>>;
      try {
        found = await raplZones(root);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        return { unavailable: code === 'ENOENT' ? `${root} is absent (a VM, a non-Linux host, or no intel_rapl driver loaded)` : readFailure(root, e) };
      }
      const readable: RaplZone[] = [];
      const problems = [...found.problems];
      for (const zone of found.zones) {
        const file = path.join(zone.dir, 'energy_uj');
        try {
          await readUj(file);
          readable.push(zone);
        } catch (e) {
          problems.push(readFailure(file, e));
        }
      }
      if (readable.length === 0) {
        return { unavailable: problems.length ? problems.join('; ') : `${root} has no intel-rapl zone (no RAPL on this CPU, or its driver is not loaded)` };
      }
      const period = (await measuredPeriod(readable.find((z) => z.kind === 'package'))) ?? RAPL_DOCUMENTED_PERIOD_S;
      // Zones that exist but cannot be read still show, NULL with their reason.
      const unreadable = found.zones.filter((z) => !readable.includes(z));
      return { reader: new RaplReader([...readable, ...unreadable], period), notes: found.problems };
    },
  };
}
