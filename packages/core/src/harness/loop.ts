import type { Dataset, Preprocessor } from '../contracts/dataset.js';
import type { PreparedModel } from '../contracts/engine.js';
import type { MetricContext, MetricValue } from '../contracts/metric.js';
import type { Boundary, SessionResult } from '../contracts/profile.js';
import type { BatchScore, Scorer } from '../contracts/scorer.js';
import type { TensorMap } from '../contracts/tensor.js';
import { summarize } from '../stats/summary.js';
import type { Deadline } from './deadline.js';
import { PerformanceTracker } from './tracker.js';

export interface LoopPlan {
  prepared: PreparedModel;
  dataset: Dataset;
  preprocessor: Preprocessor;
  inputName: string;
  outputName: string;
  batchSize: number;
  batches: number;
  warmupBatches: number;
  sessions: number;
  scorers: Scorer[];
  /** Reference engine outputs per batch index, computed before the loop, for scorers that compare against them. */
  references?: TensorMap[];
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
  /** Raw per-batch ns per boundary, session-major; `engine` is empty when the engine does not report its time. */
  raw: Record<TimedBoundary, Float64Array>;
  scores: BatchScore[][];
}

const now = process.hrtime.bigint;

/**
 * The unified loop (DESIGN.md, Algorithm 1): warmup, then S sessions over the same batches, each inside the
 * tracker. Per batch, preprocess and predict are timed (ns, hrtime). Session 1 keeps its outputs, and scoring runs
 * on them after that session's tracker has stopped: no scorer runs inside a timed session.
 */
export async function runLoop(plan: LoopPlan): Promise<LoopResult> {
  const { prepared, dataset, preprocessor, batchSize: B, batches, deadline } = plan;
  for (let w = 0; w < plan.warmupBatches; w++) {
    const x = preprocessor.apply(dataset.read((w % batches) * B, B));
    await deadline.run(prepared.predict({ [plan.inputName]: x }));
  }
  const total = batches * plan.sessions;
  const raw = { engine: new Float64Array(total), predict: new Float64Array(total), end_to_end: new Float64Array(total) };
  let hasEngine = true;
  const sessions: SessionResult[] = [];
  const metricValues: MetricValue[][] = [];
  const kept: TensorMap[] = [];
  for (let s = 0; s < plan.sessions; s++) {
    plan.onSession?.(s);
    const offset = s * batches;
    await plan.tracker.start(plan.metricContext);
    const wallStart = now();
    for (let b = 0; b < batches; b++) {
      deadline.check();
      const rawBatch = dataset.read(b * B, B);
      const t0 = now();
      const x = preprocessor.apply(rawBatch);
      const t1 = now();
      const result = await deadline.race(prepared.predict({ [plan.inputName]: x }));
      const t2 = now();
      raw.predict[offset + b] = Number(t2 - t1);
      raw.end_to_end[offset + b] = Number(t2 - t0);
      if (result.engineNs === undefined) hasEngine = false;
      else raw.engine[offset + b] = Number(result.engineNs);
      if (s === 0) kept.push(result.outputs);
    }
    const wallNs = Number(now() - wallStart);
    const values = await plan.tracker.stop(plan.metricContext);
    metricValues.push(values);
    const slice = (a: Float64Array): Float64Array => a.subarray(offset, offset + batches);
    const predictSum = slice(raw.predict).reduce((a, v) => a + v, 0);
    const latency: SessionResult['latency'] = {
      predict: summarize(slice(raw.predict)),
      end_to_end: summarize(slice(raw.end_to_end)),
    };
    if (hasEngine) latency.engine = summarize(slice(raw.engine));
    sessions.push({
      index: s,
      batches,
      samples: batches * B,
      wall_ns: wallNs,
      throughput_sps: (batches * B * 1e9) / predictSum,
      latency,
      metrics: Object.fromEntries(values.map((v) => [v.name, v.value])),
    });
  }
  if (!hasEngine) raw.engine = new Float64Array(0);
  return { sessions, metricValues, raw, scores: scoreOutputs(plan, kept) };
}

/** Scores session 1's outputs batch by batch (later sessions repeat identical batches). */
function scoreOutputs(plan: LoopPlan, outputs: TensorMap[]): BatchScore[][] {
  const references = plan.references ?? [];
  return plan.scorers.map((scorer) =>
    outputs.map((out, b) =>
      scorer.score(out, plan.dataset.read(b * plan.batchSize, plan.batchSize).labels, {
        outputName: plan.outputName,
        reference: scorer.needsReference ? references[b] : undefined,
      }),
    ),
  );
}
