import type { Clock } from '../contracts/clock.js';
import type { SystemUnderTest } from '../contracts/engine.js';
import type { MetricContext, MetricValue } from '../contracts/metric.js';
import type { Boundary, SessionResult } from '../contracts/profile.js';
import { summarize } from '../stats/summary.js';
import type { SessionInterference } from '../system/interference.js';
import type { TrackedEnergy } from '../energy/summary.js';
import type { Deadline } from './deadline.js';
import type { PerformanceTracker } from './tracker.js';

/** What a session runs on: a prepared copy of the model, its performance set resident and warm. */
export interface SessionRunner {
  sut: SystemUnderTest;
  metricContext: MetricContext;
}

export interface LoopPlan {
  sut: SystemUnderTest;
  /** Resident batches in the performance set. */
  residentBatches: number;
  /** Preprocessing time of each resident batch, measured when it was made. */
  preprocessNs: Float64Array;
  batchSize: number;
  sessions: number;
  /** A session goes on, cycling over the resident batches, until both are met (LoadGen's min_duration and min_query_count). */
  minSessionNs: number;
  minSessionQueries: number;
  tracker: PerformanceTracker;
  metricContext: MetricContext;
  deadline: Deadline;
  /** The harness's clock, for the transport diagnostic. */
  clock: Clock;
  onSession?: (index: number) => void;
}

export type TimedBoundary = Exclude<Boundary, 'model_only'>;

/** Raw per-query ns of one boundary and the session each belongs to (-2: the transport probe after the sessions). */
export interface RawSeries {
  values: Float64Array;
  sessionOf: Int32Array;
}

export interface LoopResult {
  sessions: SessionResult[];
  /** What each session's tracker reported, with each value's declared aggregation. */
  metricValues: MetricValue[][];
  interference: SessionInterference[];
  energy: TrackedEnergy[];
  /** Raw per-query ns per boundary. */
  raw: Partial<Record<TimedBoundary, RawSeries>>;
  /** The boundary throughput and the ranked latencies are computed from: measured where the runtime lives. */
  headline: 'engine';
}

/** Session index of the transport probe's queries in raw samples (model-only uses -1). */
export const TRANSPORT_PROBE_SESSION = -2;

/** The transport probe: every resident batch once, and at least this many queries while its budget lasts. */
const PROBE_QUERIES = 32;
const PROBE_BUDGET_NS = 500_000_000n;

class Series {
  readonly values: number[] = [];
  readonly sessionOf: number[] = [];
  push(session: number, ns: number): void {
    this.values.push(ns);
    this.sessionOf.push(session);
  }
  done(): RawSeries {
    return { values: Float64Array.from(this.values), sessionOf: Int32Array.from(this.sessionOf) };
  }
}

/**
 * A diagnostic outside any tracker: resident batches issued one by one by the harness as plain requests, so
 * predict (the harness's time), transport (predict - engine) and end_to_end (preprocessing + predict) are measured
 * per batch. Nothing here is ranked.
 */
async function transportProbe(plan: LoopPlan, out: { predict: Series; transport: Series; end_to_end: Series }): Promise<void> {
  const { clock } = plan;
  const until = clock() + PROBE_BUDGET_NS;
  for (let q = 0; q < plan.residentBatches || (q < PROBE_QUERIES && clock() < until); q++) {
    plan.deadline.check();
    const b = q % plan.residentBatches;
    const t1 = clock();
    const { engineNs } = await plan.deadline.race(plan.sut.issue(b));
    const predictNs = Number(clock() - t1);
    out.predict.push(TRANSPORT_PROBE_SESSION, predictNs);
    out.end_to_end.push(TRANSPORT_PROBE_SESSION, plan.preprocessNs[b]! + predictNs);
    out.transport.push(TRANSPORT_PROBE_SESSION, predictNs - Number(engineNs));
  }
}

/**
 * LoadGen's single- and multi-stream performance mode over the resident performance set, one tracked session at a
 * time: the rounds (harness/rounds.ts) interleave the sessions of a group's contenders, each call one closed-loop
 * session of the system under test (in the runtime's process) that runs every batch, its minimum query count and its
 * minimum duration. `finish` runs the transport probe and hands back every session.
 */
export class StreamSessions {
  private readonly series = { engine: new Series(), predict: new Series(), transport: new Series(), end_to_end: new Series() };
  readonly sessions: SessionResult[] = [];
  private readonly metricValues: MetricValue[][] = [];
  private readonly interference: SessionInterference[] = [];
  private readonly energy: TrackedEnergy[] = [];
  /** The plan's own copy first, then the replicas: session s runs on copy s mod their number. */
  private readonly runners: SessionRunner[];

  constructor(private readonly plan: LoopPlan) {
    this.runners = [{ sut: plan.sut, metricContext: plan.metricContext }];
  }

  /** Another prepared copy of the model, warm and resident, to take every n-th session. */
  addReplica(runner: SessionRunner): void {
    this.runners.push(runner);
  }

  get replicas(): number {
    return this.runners.length;
  }

  /** The copy the next session runs on. */
  get nextReplica(): number {
    return this.sessions.length % this.runners.length;
  }

  /** One tracked session; its index is the next in order. */
  async session(): Promise<SessionResult> {
    const { plan } = this;
    const s = this.sessions.length;
    const replica = this.nextReplica;
    const { sut, metricContext } = this.runners[replica]!;
    plan.onSession?.(s);
    await plan.tracker.start(metricContext);
    const t = await plan.deadline.run(sut.closedLoop({ batches: plan.residentBatches, minQueries: plan.minSessionQueries, minDurationNs: plan.minSessionNs }));
    const tracked = await plan.tracker.stop(metricContext);
    this.metricValues.push(tracked.metrics);
    if (tracked.interference) this.interference.push(tracked.interference);
    if (tracked.energy) this.energy.push(tracked.energy);
    let total = 0;
    for (const ns of t.engineNs) {
      this.series.engine.push(s, ns);
      total += ns;
    }
    const samples = t.engineNs.length * plan.batchSize;
    const result: SessionResult = {
      index: s,
      batches: t.engineNs.length,
      samples,
      wall_ns: t.wallNs,
      throughput_sps: (samples * 1e9) / total,
      latency: { engine: summarize(t.engineNs) },
      metrics: Object.fromEntries(tracked.metrics.map((v) => [v.name, v.value])),
      ...(this.runners.length > 1 ? { replica } : {}),
    };
    this.sessions.push(result);
    return result;
  }

  /** The transport probe after the last session, then every session's figures and raw samples. */
  async finish(): Promise<LoopResult> {
    await transportProbe(this.plan, this.series);
    const raw: LoopResult['raw'] = {};
    for (const [boundary, values] of Object.entries(this.series) as [TimedBoundary, Series][]) {
      if (values.values.length) raw[boundary] = values.done();
    }
    return { sessions: this.sessions, metricValues: this.metricValues, interference: this.interference, energy: this.energy, raw, headline: 'engine' };
  }
}

/** The unified loop (Algorithm 1) with a fixed count: `plan.sessions` sessions back to back, then the transport probe. */
export async function runLoop(plan: LoopPlan): Promise<LoopResult> {
  const loop = new StreamSessions(plan);
  for (let s = 0; s < plan.sessions; s++) await loop.session();
  return loop.finish();
}
