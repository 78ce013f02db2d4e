import { setTimeout as sleep } from 'node:timers/promises';
import type { TdpFacts } from '../contracts/energy.js';
import type { SystemInfo } from '../contracts/profile.js';
import type { EnergyConfig } from '../config/schema.js';
import { tdpEstimatePlugin } from './estimate.js';
import { nvmlPlugin } from './nvml.js';
import { raplPlugin } from './rapl.js';
import type { DomainWindow, EnergyReader, EnergyReaderPlugin } from './reader.js';
import type { EnergyFacts, IdleWindows, SessionEnergy } from './summary.js';
import { resolveTdp } from './tdp-table.js';

/**
 * The readers of one sweep, opened once: begin before a session's timed region, a poll every `poll_ms` between, end
 * after it. A reader that fails mid-session loses that session's figure (NULL with the reason), never the cell.
 */
export class EnergyMeter {
  private timer: NodeJS.Timeout | undefined;
  private failed = new Map<EnergyReader, string>();
  private polling: Promise<unknown> = Promise.resolve();

  constructor(
    readonly readers: readonly EnergyReader[],
    readonly facts: EnergyFacts,
    readonly settings: Pick<EnergyConfig, 'poll_ms' | 'idle_baseline_s'>,
  ) {}

  async begin(pids: readonly number[]): Promise<void> {
    this.failed.clear();
    await Promise.all(
      this.readers.map((r) => r.begin(pids).catch((e: unknown) => void this.failed.set(r, `${r.name}: ${(e as Error).message}`))),
    );
    this.timer = setInterval(() => {
      this.polling = Promise.all(this.readers.filter((r) => !this.failed.has(r)).map((r) => r.poll().catch(() => undefined)));
    }, this.settings.poll_ms);
    this.timer.unref();
  }

  async end(index: number): Promise<SessionEnergy> {
    clearInterval(this.timer);
    await this.polling;
    const windows: DomainWindow[] = [];
    for (const r of this.readers) {
      if (this.failed.has(r)) continue;
      try {
        windows.push(...(await r.end()));
      } catch (e) {
        this.failed.set(r, `${r.name}: ${(e as Error).message}`);
      }
    }
    return { index, windows, problems: [...this.failed.values()] };
  }

  /** The idle baseline: the same windows over `idle_baseline_s` seconds with nothing running; null when not asked for. */
  async idle(pids: readonly number[]): Promise<IdleWindows | null> {
    const seconds = this.settings.idle_baseline_s;
    if (seconds <= 0) return null;
    await this.begin(pids);
    await sleep(seconds * 1000);
    const { windows } = await this.end(-1);
    return { seconds, windows };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.readers.map((r) => r.close().catch(() => undefined)));
  }
}

/** The TDP the estimate charges on this machine, from the user's figure or the table (tdp-table.ts). */
export function tdpFor(settings: EnergyConfig, system: SystemInfo): TdpFacts | { unavailable: string } {
  return resolveTdp(system.cpu_model, system.cpu_vendor, system.cpu_cores, {
    watts: settings.tdp_w ?? null,
    threads: settings.tdp_threads ?? null,
  });
}

/** The built-in readers, in the order they are opened: RAPL, NVML, then the estimate. */
export function defaultReaderPlugins(settings: EnergyConfig, system: SystemInfo): EnergyReaderPlugin[] {
  return [raplPlugin(), nvmlPlugin(), tdpEstimatePlugin(tdpFor(settings, system))];
}

export async function openEnergyMeter(settings: EnergyConfig, tdp: TdpFacts | null, plugins: readonly EnergyReaderPlugin[]): Promise<EnergyMeter> {
  const readers: EnergyReader[] = [];
  const unavailable: EnergyFacts['unavailable'] = [];
  for (const plugin of plugins) {
    const opened = await plugin.open().catch((e: unknown) => ({ unavailable: (e as Error).message }));
    if ('unavailable' in opened) unavailable.push({ reader: plugin.name, reason: opened.unavailable });
    else {
      readers.push(opened.reader);
      for (const note of opened.notes ?? []) unavailable.push({ reader: plugin.name, reason: note });
    }
  }
  return new EnergyMeter(readers, { minTicks: settings.min_ticks, unavailable, tdp }, settings);
}

const meters = new Map<string, Promise<EnergyMeter>>();

/**
 * One meter per process for a given config and machine: opening spawns NVML's sidecar and spins on RAPL's counter
 * for its period, which every cell of a sweep would otherwise repeat. Null when energy collection is off.
 */
export function energyMeterFor(settings: EnergyConfig, system: SystemInfo): Promise<EnergyMeter> | null {
  if (!settings.enabled) return null;
  const key = JSON.stringify([settings, system.cpu_model, system.cpu_vendor, system.cpu_cores]);
  let meter = meters.get(key);
  if (!meter) {
    const tdp = tdpFor(settings, system);
    meter = openEnergyMeter(settings, 'unavailable' in tdp ? null : tdp, defaultReaderPlugins(settings, system));
    meters.set(key, meter);
  }
  return meter;
}
