import type { Metric, MetricContext, MetricValue } from '../contracts/metric.js';
import { cpuSnapshot, sessionInterference, type CpuSnapshot, type SessionInterference } from '../system/interference.js';
import type { EnergyMeter } from '../energy/meter.js';
import type { IdleWindows, TrackedEnergy } from '../energy/summary.js';

/** What the tracker saw of one session: the metrics' values, and what the rest of the machine did meanwhile. */
export interface TrackedSession {
  metrics: MetricValue[];
  interference: SessionInterference | null;
  /** The energy readers' windows around the session; null when energy collection is off. */
  energy: TrackedEnergy | null;
}

/**
 * The Performance Tracker: a set of Metrics started and stopped around one session, the machine's CPU ticks
 * read on both sides of it (interference: other processes than the harness and the model's), and the energy
 * readers begun just before and ended just after it.
 */
export class PerformanceTracker {
  private sessions = 0;
  private before: CpuSnapshot | null = null;
  /** Undefined until the first session's start takes it (energy.idle_baseline_s > 0), before any metric starts. */
  private idle: IdleWindows | null | undefined;

  constructor(
    private readonly metrics: Metric[],
    private readonly energy: Promise<EnergyMeter> | null = null,
  ) {}

  async start(ctx: MetricContext): Promise<void> {
    const meter = await this.energy;
    if (meter && this.idle === undefined) this.idle = await meter.idle([process.pid, ctx.pid]);
    for (const m of this.metrics) await m.start(ctx);
    this.before = await cpuSnapshot([process.pid, ctx.pid]);
    await meter?.begin([process.pid, ctx.pid]);
  }

  async stop(ctx: MetricContext): Promise<TrackedSession> {
    const meter = await this.energy;
    const index = this.sessions++;
    const energy = meter ? { ...(await meter.end(index)), facts: meter.facts, idle: this.idle ?? null } : null;
    const after = await cpuSnapshot([process.pid, ctx.pid]);
    const interference = this.before && after ? sessionInterference(index, this.before, after) : null;
    const metrics: MetricValue[] = [];
    for (const m of this.metrics) metrics.push(...(await m.stop(ctx)));
    return { metrics, interference, energy };
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
