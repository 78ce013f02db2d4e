import type { Metric, MetricContext, MetricValue } from '../contracts/metric.js';

/** The Performance Tracker: a set of Metrics started and stopped around one session. */
export class PerformanceTracker {
  constructor(private readonly metrics: Metric[]) {}

  async start(ctx: MetricContext): Promise<void> {
    for (const m of this.metrics) await m.start(ctx);
  }

  async stop(ctx: MetricContext): Promise<MetricValue[]> {
    const out: MetricValue[] = [];
    for (const m of this.metrics) out.push(...(await m.stop(ctx)));
    return out;
  }
}

/** Across sessions, each value as its metric declares: a peak the max, an amount or rate the mean. */
export function aggregateMetrics(perSession: MetricValue[][]): Record<string, number> {
  const byName = new Map<string, { aggregate: MetricValue['aggregate']; values: number[] }>();
  for (const v of perSession.flat()) {
    if (!Number.isFinite(v.value)) continue;
    const entry = byName.get(v.name) ?? { aggregate: v.aggregate, values: [] };
    entry.values.push(v.value);
    byName.set(v.name, entry);
  }
  const out: Record<string, number> = {};
  for (const [name, { aggregate, values }] of byName) {
    out[name] = aggregate === 'max' ? Math.max(...values) : values.reduce((a, b) => a + b, 0) / values.length;
  }
  return out;
}
