import type { Metric, MetricContext } from '../contracts/metric.js';

/** The Performance Tracker: a set of Metrics started and stopped around one session. */
export class PerformanceTracker {
  constructor(private readonly metrics: Metric[]) {}

  async start(ctx: MetricContext): Promise<void> {
    for (const m of this.metrics) await m.start(ctx);
  }

  async stop(ctx: MetricContext): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const m of this.metrics) for (const v of await m.stop(ctx)) out[v.name] = v.value;
    return out;
  }
}

/** Across sessions: peaks take the max, everything else the mean. */
export function aggregateMetrics(perSession: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  const names = new Set(perSession.flatMap((s) => Object.keys(s)));
  for (const name of names) {
    const values = perSession.map((s) => s[name]).filter((v): v is number => v !== undefined && Number.isFinite(v));
    if (values.length === 0) continue;
    out[name] = name.startsWith('peak_') ? Math.max(...values) : values.reduce((a, b) => a + b, 0) / values.length;
  }
  return out;
}
