import type { ClosedLoopRequest, ClosedLoopTimings } from '../contracts/engine.js';
import type { MetricContext, MetricValue } from '../contracts/metric.js';
import type { Boundary, SessionResult } from '../contracts/profile.js';
import { summarize } from '../stats/summary.js';
import type { Deadline } from './deadline.js';
import type { ResidentQuery } from './resident.js';
import { PerformanceTracker } from './tracker.js';

export interface LoopPlan {
  /** Runs resident batch b: in the runtime's process where the engine takes resident samples (resident.ts). */
  query: ResidentQuery;
  /** Runs a whole session in the runtime's process, where the engine can (no pipe between queries). */
  closedLoop?: (request: ClosedLoopRequest) => Promise<ClosedLoopTimings>;
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
  /** Raw per-query ns per boundary; boundaries an engine cannot report are absent. */
  raw: Partial<Record<TimedBoundary, RawSeries>>;
  /** The boundary throughput and the ranked latencies are computed from. */
  headline: 'engine' | 'predict' | 'query';
}

/** Session index of the transport probe's queries in raw samples (model-only uses -1). */
export const TRANSPORT_PROBE_SESSION = -2;

const now = process.hrtime.bigint;

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

/** Harness-driven session: one query at a time through `query`, timed on both sides of the call. */
async function harnessSession(plan: LoopPlan, s: number, out: { predict: Series; engine: Series; end_to_end: Series }): Promise<{ queries: number; wallNs: number; reportsEngine: boolean }> {
  const { query, deadline, residentBatches: K } = plan;
  let reportsEngine = true;
  const wallStart = now();
  let q = 0;
  for (; q < K || q < plan.minSessionQueries || Number(now() - wallStart) < plan.minSessionNs; q++) {
    deadline.check();
    const b = q % K;
    const t1 = now();
    const result = await deadline.race(query(b));
    const predictNs = Number(now() - t1);
    out.predict.push(s, predictNs);
    out.end_to_end.push(s, plan.preprocessNs[b]! + predictNs);
    if (result.engineNs === undefined) reportsEngine = false;
    else out.engine.push(s, Number(result.engineNs));
  }
  return { queries: q, wallNs: Number(now() - wallStart), reportsEngine };
}

/**
 * The transport probe runs every resident batch once and a session's minimum query count (up to PROBE_MAX_QUERIES),
 * then goes on to PROBE_MIN_QUERIES while PROBE_BUDGET_NS has not passed. The first runs after a session settle the
 * path (the first goes as a frame; in one demo OpenVINO wine_mlp b8's first three took 340-520 µs, the rest 10-44 µs),
 * so a probe of the demo's one pass over 6 batches put that Profile's transport p50 at 193 µs.
 */
const PROBE_MIN_QUERIES = 64;
const PROBE_MAX_QUERIES = 1024;
const PROBE_BUDGET_NS = 500_000_000n;

/**
 * The transport of a session run inside the runtime: the same queries one by one through the harness, outside any
 * tracker, so predict, transport (predict - engine) and end_to_end stay measured per batch.
 */
async function transportProbe(plan: LoopPlan, out: { predict: Series; transport: Series; end_to_end: Series }): Promise<void> {
  const n = Math.max(plan.residentBatches, Math.min(plan.minSessionQueries, PROBE_MAX_QUERIES));
  const until = now() + PROBE_BUDGET_NS;
  for (let q = 0; q < n || (q < PROBE_MIN_QUERIES && now() < until); q++) {
    plan.deadline.check();
    const b = q % plan.residentBatches;
    const t1 = now();
    const result = await plan.deadline.race(plan.query(b));
    const predictNs = Number(now() - t1);
    out.predict.push(TRANSPORT_PROBE_SESSION, predictNs);
    out.end_to_end.push(TRANSPORT_PROBE_SESSION, plan.preprocessNs[b]! + predictNs);
    if (result.engineNs !== undefined) out.transport.push(TRANSPORT_PROBE_SESSION, predictNs - Number(result.engineNs));
  }
}

/**
 * The unified loop (DESIGN.md, Algorithm 1), LoadGen's single- and multi-stream performance mode over the resident
 * performance set: S sessions, each inside the tracker, issuing one query at a time over the resident batches until
 * the session has run every batch, its minimum query count and its minimum duration. Where the engine can run a
 * session in its own process (runClosedLoop), it does, and the transport is probed per batch afterwards.
 */
export async function runLoop(plan: LoopPlan): Promise<LoopResult> {
  const B = plan.batchSize;
  const series = { predict: new Series(), engine: new Series(), transport: new Series(), end_to_end: new Series() };
  let reportsEngine = true;
  const sessions: SessionResult[] = [];
  const metricValues: MetricValue[][] = [];
  for (let s = 0; s < plan.sessions; s++) {
    plan.onSession?.(s);
    await plan.tracker.start(plan.metricContext);
    let run: { queries: number; wallNs: number };
    if (plan.closedLoop) {
      const t = await plan.deadline.run(
        plan.closedLoop({ batches: plan.residentBatches, minQueries: plan.minSessionQueries, minDurationNs: plan.minSessionNs }),
      );
      t.engineNs.forEach((ns) => series.engine.push(s, ns));
      run = { queries: t.engineNs.length, wallNs: t.wallNs };
    } else {
      const h = await harnessSession(plan, s, series);
      reportsEngine &&= h.reportsEngine;
      run = h;
    }
    metricValues.push(await plan.tracker.stop(plan.metricContext));
    sessions.push({ index: s, batches: run.queries, samples: run.queries * B, wall_ns: run.wallNs, throughput_sps: 0, latency: {}, metrics: {} });
  }
  if (plan.closedLoop) await transportProbe(plan, series);
  else if (reportsEngine) series.predict.values.forEach((p, i) => series.transport.push(series.predict.sessionOf[i]!, p - series.engine.values[i]!));
  const raw: LoopResult['raw'] = {};
  for (const [boundary, values] of Object.entries(series) as [TimedBoundary, Series][]) {
    if (values.values.length && (reportsEngine || (boundary !== 'engine' && boundary !== 'transport'))) raw[boundary] = values.done();
  }
  const headline = raw.engine ? 'engine' : 'predict';
  for (const session of sessions) {
    for (const [boundary, r] of Object.entries(raw) as [TimedBoundary, RawSeries][]) {
      const mine = r.values.filter((_, i) => r.sessionOf[i] === session.index);
      if (mine.length) session.latency[boundary] = summarize(mine);
    }
    const timed = raw[headline]!;
    const total = timed.values.reduce((a, v, i) => (timed.sessionOf[i] === session.index ? a + v : a), 0);
    session.throughput_sps = (session.samples * 1e9) / total;
    session.metrics = Object.fromEntries(metricValues[session.index]!.map((v) => [v.name, v.value]));
  }
  return { sessions, metricValues, raw, headline };
}
