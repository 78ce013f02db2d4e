import type { Dataset, Preprocessor } from '../contracts/dataset.js';
import type { PreparedModel } from '../contracts/engine.js';
import type { MetricContext } from '../contracts/metric.js';
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
  metricContext: (recorded: () => { predictNs: ArrayLike<number>; samples: number }) => MetricContext;
  deadline: Deadline;
  onSession?: (index: number) => void;
}

export interface LoopResult {
  sessions: SessionResult[];
  /** Raw per-batch ns per boundary, session-major. */
  raw: Record<Exclude<Boundary, 'model_only'>, Float64Array>;
  scores: BatchScore[][];
}

const now = process.hrtime.bigint;

/**
 * The unified loop (DESIGN.md): warmup, then S sessions over the same batches, each inside the tracker.
 * Per batch: preprocess and predict are timed (ns, hrtime); scoring happens after the timestamps, on the
 * first session only (later sessions repeat identical batches).
 */
export async function runLoop(plan: LoopPlan): Promise<LoopResult> {
  const { prepared, dataset, preprocessor, batchSize: B, batches, deadline } = plan;
  const references = plan.references ?? [];
  for (let w = 0; w < plan.warmupBatches; w++) {
    const x = preprocessor.apply(dataset.read((w % batches) * B, B));
    await deadline.run(prepared.predict({ [plan.inputName]: x }));
  }
  const total = batches * plan.sessions;
  const raw = { engine: new Float64Array(total), predict: new Float64Array(total), end_to_end: new Float64Array(total) };
  let hasEngine = true;
  const sessions: SessionResult[] = [];
  const scores: BatchScore[][] = plan.scorers.map(() => []);
  for (let s = 0; s < plan.sessions; s++) {
    plan.onSession?.(s);
    const offset = s * batches;
    let done = 0;
    const ctx = plan.metricContext(() => ({ predictNs: raw.predict.subarray(offset, offset + done), samples: done * B }));
    await plan.tracker.start(ctx);
    const wallStart = now();
    for (let b = 0; b < batches; b++) {
      deadline.check();
      const rawBatch = dataset.read(b * B, B);
      const t0 = now();
      const x = preprocessor.apply(rawBatch);
      const t1 = now();
      const result = await prepared.predict({ [plan.inputName]: x });
      const t2 = now();
      raw.predict[offset + b] = Number(t2 - t1);
      raw.end_to_end[offset + b] = Number(t2 - t0);
      if (result.engineNs === undefined) hasEngine = false;
      else raw.engine[offset + b] = Number(result.engineNs);
      done = b + 1;
      if (s === 0) {
        for (let k = 0; k < plan.scorers.length; k++) {
          const scorer = plan.scorers[k]!;
          const reference = scorer.needsReference ? references[b] : undefined;
          scores[k]!.push(scorer.score(result.outputs, rawBatch.labels, { outputName: plan.outputName, reference }));
        }
      }
    }
    const wallNs = Number(now() - wallStart);
    const metrics = await plan.tracker.stop(ctx);
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
      metrics,
    });
  }
  if (!hasEngine) raw.engine = new Float64Array(0);
  return { sessions, raw, scores };
}
