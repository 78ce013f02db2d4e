import type { LayerTiming, MemorySample, PreparedModel } from '../contracts/engine.js';
import type { TensorMap } from '../contracts/tensor.js';
import { cpuTimeUs, rssBytes } from '../metrics/process-stats.js';
import type { SweepContext } from './context.js';
import type { Deadline } from './deadline.js';
import { runLoop, type LoopResult } from './loop.js';
import type { CellPlan } from './plan.js';
import { scoreAll, type AccuracyPass } from './score.js';
import { PerformanceTracker } from './tracker.js';

export interface Measurement {
  loop: LoopResult;
  accuracy: AccuracyPass;
  /** The engine's own timing loop on a resident input (no IPC), per iteration ns. */
  modelOnlyNs: number[] | null;
  memory: MemorySample | null;
  layers: LayerTiming[];
}

/** Longest the model-only bench may take: the sessions already measured the same model. */
const MODEL_ONLY_BUDGET_NS = 5e9;

const now = process.hrtime.bigint;

/** The performance set, preprocessed in TypeScript before anything is timed, each batch's preprocessing timed. */
function residentBatches(plan: CellPlan): { resident: TensorMap[]; preprocessNs: Float64Array } {
  const resident: TensorMap[] = [];
  const preprocessNs = new Float64Array(plan.batches);
  for (let b = 0; b < plan.batches; b++) {
    const raw = plan.dataset.read(b * plan.batchSize, plan.batchSize);
    const t0 = now();
    resident.push(plan.feeder.feed(raw));
    preprocessNs[b] = Number(now() - t0);
  }
  return { resident, preprocessNs };
}

/**
 * The measure phase: the resident performance set, warmup and the tracked sessions; then, outside any tracker, the
 * accuracy pass over every sample, the model-only bench and the layer profile.
 */
export async function measureCell(ctx: SweepContext, plan: CellPlan, model: PreparedModel, references: TensorMap[], deadline: Deadline): Promise<Measurement> {
  const exp = ctx.loaded.experiment;
  ctx.onProgress?.({ kind: 'phase', phase: 'measure' });
  const pid = model.pid?.() ?? process.pid;
  const loop = await runLoop({
    prepared: model,
    ...residentBatches(plan),
    batchSize: plan.batchSize,
    warmupBatches: exp.warmup_batches,
    sessions: exp.sessions,
    tracker: new PerformanceTracker(exp.metrics.map((m) => ctx.registry.metric(m))),
    metricContext: { pid, sampleRssBytes: () => rssBytes(pid), cpuTimeUs: () => cpuTimeUs(pid) },
    deadline,
    onSession: (index) => ctx.onProgress?.({ kind: 'session', index, of: exp.sessions }),
  });
  ctx.onProgress?.({ kind: 'phase', phase: 'score' });
  const accuracy = await scoreAll(plan, model, references, deadline);
  let modelOnlyNs: number[] | null = null;
  if (model.bench) {
    ctx.onProgress?.({ kind: 'phase', phase: 'model-only bench' });
    // As many iterations as a session has batches (at least 10), within the budget: an untuned compiler can take
    // seconds per batch.
    const timed = loop.raw[loop.headline];
    const perBatchNs = timed.reduce((a, v) => a + v, 0) / Math.max(1, timed.length);
    const budget = perBatchNs > 0 ? Math.floor(MODEL_ONLY_BUDGET_NS / perBatchNs) : Infinity;
    const iterations = Math.max(3, Math.min(Math.max(10, plan.batches), budget));
    modelOnlyNs = (await deadline.run(model.bench(plan.firstBatch, iterations))).iterationNs;
  }
  const memory = model.memory ? await deadline.run(model.memory()) : null;
  let layers: LayerTiming[] = [];
  if (exp.layer_profile.enabled && model.layerProfile) {
    ctx.onProgress?.({ kind: 'phase', phase: 'layer profile' });
    layers = await deadline.run(model.layerProfile(plan.firstBatch, exp.layer_profile.iterations));
  }
  return { loop, accuracy, modelOnlyNs, memory, layers };
}
