/** What a metric sees while it runs: the process that runs the model and the batches recorded. */
export interface MetricContext {
  /** PID of the process that runs the model (the harness itself for in-process engines). */
  pid: number;
  /** Reads the RSS of that process; in-process engines read process.memoryUsage, workers /proc. */
  sampleRssBytes(): Promise<number>;
  /** Reads user+system CPU time of that process in microseconds. */
  cpuTimeUs(): Promise<number>;
  /** What the session recorded so far: per-batch predict latencies (ns) and samples processed. */
  recorded(): { predictNs: ArrayLike<number>; samples: number };
}

export interface MetricValue {
  name: string;
  value: number;
  unit: string;
}

/** The Performance Tracker is a set of Metrics started and stopped around each session. */
export interface Metric {
  name: string;
  description: string;
  start(ctx: MetricContext): void | Promise<void>;
  stop(ctx: MetricContext): Promise<MetricValue[]>;
}
