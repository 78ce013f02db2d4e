import type { EnergyDomain, EnergyMethod } from '../contracts/energy.js';

/** One domain's figure over one window (a session, or the idle baseline). */
export interface DomainWindow {
  name: string;
  kind: EnergyDomain['kind'];
  device: EnergyDomain['device'];
  /** Part of the total when its reader's figures are measured (see summary.ts for the estimate). */
  counted: boolean;
  method: EnergyMethod;
  /** NULL with `reason` when the domain could not be read or did not move. */
  joules: number | null;
  seconds: number;
  ticks: number | null;
  updatePeriodS: number | null;
  reason: string | null;
  /** What to report instead when this figure has too few counter updates (NVML's power samples for its energy counter). */
  fallback?: DomainWindow;
}

/**
 * The one contract every energy reader implements. The tracker calls begin before a session's timed region, poll
 * between (so a counter cannot wrap twice unseen), and end after it; none of them runs inside the timed calls.
 */
export interface EnergyReader {
  readonly name: string;
  /** The processes whose CPU time the estimate charges (the harness and the model's process). */
  begin(pids: readonly number[]): Promise<void>;
  poll(): Promise<void>;
  end(): Promise<DomainWindow[]>;
  close(): Promise<void>;
}

/** What opening a reader gives: the reader, or why it cannot run on this machine. */
export type OpenedReader = { reader: EnergyReader; notes?: string[] } | { unavailable: string };

/** A reader as a small plugin: a name and how to open it here. */
export interface EnergyReaderPlugin {
  name: string;
  open(): Promise<OpenedReader>;
}

export const monotonicSeconds = (): number => Number(process.hrtime.bigint()) / 1e9;
