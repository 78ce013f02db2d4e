import type { MetricContext, MetricValue } from '../contracts/metric.js';
import type { Boundary, SessionResult } from '../contracts/profile.js';
import type { ResidentQuery } from './resident.js';
import { summarize } from '../stats/summary.js';
import type { Deadline } from './deadline.js';
import { PerformanceTracker } from './tracker.js';

export interface LoopPlan {
  /** Runs resident batch b: in the runtime's process where the engine takes resident samples (resident.ts). */
  query: ResidentQuery;
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

export interface LoopResult {
  sessions: SessionResult[];
  /** Session of each raw entry (sessions may differ in length). */
  sessionOf: Int32Array;
  /** What each session's tracker reported, with each value's declared aggregation. */
  metricValues: MetricValue[][];
  /** Raw per-batch ns per boundary, session-major; `engine` and `transport` are empty when the engine reports no time. */
  raw: Record<TimedBoundary, Float64Array>;
  /** The boundary throughput and the ranked latencies are computed from. */
  headline: 'engine' | 'predict' | 'query';
}

const now = process.hrtime.bigint;

/**
 * The unified loop (DESIGN.md, Algorithm 1), LoadGen's single- and multi-stream performance mode over the resident
 * performance set: S sessions, each inside the tracker, issuing one query at a time over the resident batches until
 * the session has run every batch, its minimum query count and its minimum duration. Per query: `predict` is the harness's call, `engine` the time the runtime's process
 * measured around the runtime's call, `transport` their difference. No tensor is made, copied or scored inside a
 * session: scoring is a separate pass (score.ts).
 */
export async function runLoop(plan: LoopPlan): Promise<LoopResult> {
  const { query, deadline, batchSize: B, residentBatches: K } = plan;
  const predict: number[] = [];
  const engine: number[] = [];
  const endToEnd: number[] = [];
  const sessionOf: number[] = [];
  let hasEngine = true;
  const sessions: SessionResult[] = [];
  const metricValues: MetricValue[][] = [];
  const bounds: [number, number][] = [];
  for (let s = 0; s < plan.sessions; s++) {
    plan.onSession?.(s);
    const first = predict.length;
    await plan.tracker.start(plan.metricContext);
    const wallStart = now();
    for (let q = 0; q < K || q < plan.minSessionQueries || Number(now() - wallStart) < plan.minSessionNs; q++) {
      deadline.check();
      const b = q % K;
      const t1 = now();
      const result = await deadline.race(query(b));
      const t2 = now();
      const predictNs = Number(t2 - t1);
      predict.push(predictNs);
      endToEnd.push(plan.preprocessNs[b]! + predictNs);
      sessionOf.push(s);
      if (result.engineNs === undefined) hasEngine = false;
      else engine.push(Number(result.engineNs));
    }
    const wallNs = Number(now() - wallStart);
    metricValues.push(await plan.tracker.stop(plan.metricContext));
    const queries = predict.length - first;
    bounds.push([first, predict.length]);
    sessions.push({ index: s, batches: queries, samples: queries * B, wall_ns: wallNs, throughput_sps: 0, latency: {}, metrics: {} });
  }
  const raw: Record<TimedBoundary, Float64Array> = {
    predict: Float64Array.from(predict),
    end_to_end: Float64Array.from(endToEnd),
    engine: hasEngine ? Float64Array.from(engine) : new Float64Array(0),
    transport: hasEngine ? Float64Array.from(predict, (p, i) => p - engine[i]!) : new Float64Array(0),
    query: new Float64Array(0),
  };
  const headline = hasEngine ? 'engine' : 'predict';
  for (const [s, session] of sessions.entries()) {
    const [from, to] = bounds[s]!;
    for (const boundary of Object.keys(raw) as TimedBoundary[]) {
      if (raw[boundary].length) session.latency[boundary] = summarize(raw[boundary].subarray(from, to));
    }
    session.throughput_sps = (session.samples * 1e9) / raw[headline].subarray(from, to).reduce((a, v) => a + v, 0);
    session.metrics = Object.fromEntries(metricValues[s]!.map((v) => [v.name, v.value]));
  }
  return { sessions, sessionOf: Int32Array.from(sessionOf), metricValues, raw, headline };
}
