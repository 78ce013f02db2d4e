import type { PreparedModel } from '../contracts/engine.js';
import type { MetricContext, MetricValue } from '../contracts/metric.js';
import type { Boundary, SessionResult } from '../contracts/profile.js';
import type { TensorMap } from '../contracts/tensor.js';
import { summarize } from '../stats/summary.js';
import type { Deadline } from './deadline.js';
import { PerformanceTracker } from './tracker.js';

export interface LoopPlan {
  prepared: PreparedModel;
  /** The performance set: preprocessed batches, resident before anything is timed. */
  resident: TensorMap[];
  /** Preprocessing time of each resident batch, measured when it was made. */
  preprocessNs: Float64Array;
  batchSize: number;
  warmupBatches: number;
  sessions: number;
  tracker: PerformanceTracker;
  metricContext: MetricContext;
  deadline: Deadline;
  onSession?: (index: number) => void;
}

export type TimedBoundary = Exclude<Boundary, 'model_only'>;

export interface LoopResult {
  sessions: SessionResult[];
  /** What each session's tracker reported, with each value's declared aggregation. */
  metricValues: MetricValue[][];
  /** Raw per-batch ns per boundary, session-major; `engine` and `transport` are empty when the engine reports no time. */
  raw: Record<TimedBoundary, Float64Array>;
  /** The boundary throughput and the ranked latencies are computed from. */
  headline: 'engine' | 'predict';
}

const now = process.hrtime.bigint;

/**
 * The unified loop (DESIGN.md, Algorithm 1), LoadGen's performance mode: the performance set is resident before
 * timing (in the runtime's process when the engine takes resident samples), warmup queries, then S sessions over it,
 * each inside the tracker. Per query: `predict` is the harness's call, `engine` the time the runtime's process
 * measured around the runtime's call, `transport` their difference. No tensor is made, copied or scored inside a
 * session: scoring is a separate pass (score.ts).
 */
export async function runLoop(plan: LoopPlan): Promise<LoopResult> {
  const { prepared, resident, deadline, batchSize: B } = plan;
  const K = resident.length;
  const inWorker = prepared.loadResident && prepared.runResident ? prepared.runResident.bind(prepared) : undefined;
  if (inWorker) await deadline.run(prepared.loadResident!(resident));
  const query: (b: number) => Promise<{ engineNs?: bigint }> = inWorker ?? ((b) => prepared.predict(resident[b]!));
  for (let w = 0; w < plan.warmupBatches; w++) await deadline.run(query(w % K));
  const total = K * plan.sessions;
  const raw = {
    engine: new Float64Array(total),
    predict: new Float64Array(total),
    transport: new Float64Array(total),
    end_to_end: new Float64Array(total),
  };
  let hasEngine = true;
  const sessions: SessionResult[] = [];
  const metricValues: MetricValue[][] = [];
  for (let s = 0; s < plan.sessions; s++) {
    plan.onSession?.(s);
    const offset = s * K;
    await plan.tracker.start(plan.metricContext);
    const wallStart = now();
    for (let b = 0; b < K; b++) {
      deadline.check();
      const t1 = now();
      const result = await deadline.race(query(b));
      const t2 = now();
      const predictNs = Number(t2 - t1);
      raw.predict[offset + b] = predictNs;
      raw.end_to_end[offset + b] = plan.preprocessNs[b]! + predictNs;
      if (result.engineNs === undefined) hasEngine = false;
      else raw.engine[offset + b] = Number(result.engineNs);
    }
    const wallNs = Number(now() - wallStart);
    metricValues.push(await plan.tracker.stop(plan.metricContext));
    sessions.push({ index: s, batches: K, samples: K * B, wall_ns: wallNs, throughput_sps: 0, latency: {}, metrics: {} });
  }
  if (hasEngine) for (let i = 0; i < total; i++) raw.transport[i] = raw.predict[i]! - raw.engine[i]!;
  else {
    raw.engine = new Float64Array(0);
    raw.transport = new Float64Array(0);
  }
  const headline = hasEngine ? 'engine' : 'predict';
  for (const [s, session] of sessions.entries()) {
    const slice = (a: Float64Array): Float64Array => a.subarray(s * K, (s + 1) * K);
    for (const boundary of Object.keys(raw) as TimedBoundary[]) {
      if (raw[boundary].length) session.latency[boundary] = summarize(slice(raw[boundary]));
    }
    session.throughput_sps = (K * B * 1e9) / slice(raw[headline]).reduce((a, v) => a + v, 0);
    session.metrics = Object.fromEntries(metricValues[s]!.map((v) => [v.name, v.value]));
  }
  return { sessions, metricValues, raw, headline };
}
