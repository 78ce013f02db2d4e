/** What a metric sees while it runs: the process that runs the model. */
export interface MetricContext {
  /** PID of the process that runs the model (the harness itself for in-process engines). */
  pid: number;
  /** Reads the RSS of that process; in-process engines read process.memoryUsage, workers /proc. */
  sampleRssBytes(): Promise<number>;
  /** Resets the kernel's peak RSS of that process to its current RSS; false where the kernel does not allow it. */
  resetPeakRss(): Promise<boolean>;
  /** The kernel's peak RSS of that process since the last reset, in bytes; NaN where it cannot be read. */
  peakRssBytes(): Promise<number>;
  /** Reads user+system CPU time of that process in microseconds. */
  cpuTimeUs(): Promise<number>;
}

/** How a metric's per-session values combine into the Profile's figure. */
export type MetricAggregate = 'max' | 'mean';

export interface MetricValue {
  name: string;
  value: number;
  unit: string;
  /** A peak is the max over sessions; a per-session amount or rate is their mean. */
  aggregate: MetricAggregate;
}

/** The Performance Tracker is a set of Metrics started and stopped around each session. */
export interface Metric {
  name: string;
  description: string;
  start(ctx: MetricContext): void | Promise<void>;
  stop(ctx: MetricContext): Promise<MetricValue[]>;
}
