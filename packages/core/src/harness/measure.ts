import type { LayerTiming, MemorySample, PreparedModel } from '../contracts/engine.js';
import type { MetricContext } from '../contracts/metric.js';
import type { TensorMap } from '../contracts/tensor.js';
import { cpuTimeUs, rssBytes } from '../metrics/process-stats.js';
import type { SweepContext } from './context.js';
import type { Deadline } from './deadline.js';
import { runLoop, type LoopResult } from './loop.js';
import type { CellPlan } from './plan.js';
import { residentQuery } from './resident.js';
import { runOpenLoop, type OpenLoopResult } from './scenarios/open-loop.js';
import { mlperfJudgement, scenarioSettings, type ScenarioSettings } from './scenarios/settings.js';
import { judge, type Verdict } from './scenarios/validity.js';
import { scoreAll, type AccuracyPass } from './score.js';
import { PerformanceTracker } from './tracker.js';

export interface Measurement {
  settings: ScenarioSettings;
  /** Single and multi stream: the session loop's per-batch boundaries. */
  loop: LoopResult | null;
  /** Server and offline: the open schedule's per-query latencies. */
  open: OpenLoopResult | null;
  /** One verdict per session, by LoadGen's rules for the scenario. */
  verdicts: Verdict[];
  /** The same sessions judged by MLPerf's minimums. */
  mlperfVerdicts: Verdict[];
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

/** Single/multi stream: each session is one LoadGen run of back-to-back queries, judged on its headline latencies. */
function streamVerdicts(settings: ScenarioSettings, loop: LoopResult, batchSize: number): Verdict[] {
  const latencies = loop.raw[loop.headline]!;
  return loop.sessions.map((session, s) => {
    const mine = latencies.values.filter((_, i) => latencies.sessionOf[i] === s);
    return judge(settings, { latenciesNs: mine, queries: session.batches, samples: session.batches * batchSize, durationNs: session.wall_ns });
  });
}

async function performance(ctx: SweepContext, plan: CellPlan, model: PreparedModel, settings: ScenarioSettings, deadline: Deadline) {
  const exp = ctx.loaded.experiment;
  const pid = model.pid?.() ?? process.pid;
  const metricContext: MetricContext = { pid, sampleRssBytes: () => rssBytes(pid), cpuTimeUs: () => cpuTimeUs(pid) };
  const tracker = new PerformanceTracker(exp.metrics.map((m) => ctx.registry.metric(m)));
  const onSession = (index: number): void => ctx.onProgress?.({ kind: 'session', index, of: exp.sessions });
  const { resident, preprocessNs } = residentBatches(plan);
  const { query, warmupNsPerQuery } = await residentQuery(model, resident, exp.warmup_batches, deadline);
  if (settings.kind === 'server' || settings.kind === 'offline') {
    const open = await runOpenLoop({
      prepared: model,
      query,
      residentBatches: resident.length,
      batchSize: plan.batchSize,
      expectedSamplesPerS: settings.expectedQps ?? (Number.isFinite(warmupNsPerQuery) ? (plan.batchSize * 1e9) / warmupNsPerQuery : 0),
      sessions: exp.sessions,
      settings,
      seed: exp.seed,
      tracker,
      metricContext,
      deadline,
      onSession,
    });
    return { loop: null, open, verdicts: open.verdicts, mlperfVerdicts: open.mlperfVerdicts };
  }
  const loop = await runLoop({
    query,
    ...(model.runClosedLoop ? { closedLoop: model.runClosedLoop.bind(model) } : {}),
    residentBatches: resident.length,
    preprocessNs,
    batchSize: plan.batchSize,
    sessions: exp.sessions,
    minSessionNs: settings.minDurationMs * 1e6,
    minSessionQueries: settings.minQueryCount,
    tracker,
    metricContext,
    deadline,
    onSession,
  });
  return {
    loop,
    open: null,
    verdicts: streamVerdicts(settings, loop, plan.batchSize),
    mlperfVerdicts: streamVerdicts(mlperfJudgement(settings), loop, plan.batchSize),
  };
}

/**
 * The measure phase: the resident performance set, warmup and the tracked sessions of the cell's scenario; then,
 * outside any tracker, the accuracy pass over every sample, the model-only bench and the layer profile.
 */
export async function measureCell(ctx: SweepContext, plan: CellPlan, model: PreparedModel, references: TensorMap[], deadline: Deadline): Promise<Measurement> {
  const exp = ctx.loaded.experiment;
  const settings = scenarioSettings(exp, plan.cell);
  ctx.onProgress?.({ kind: 'phase', phase: `measure (${settings.kind})` });
  const { loop, open, verdicts, mlperfVerdicts } = await performance(ctx, plan, model, settings, deadline);
  ctx.onProgress?.({ kind: 'phase', phase: 'score' });
  const accuracy = await scoreAll(plan, model, references, deadline);
  let modelOnlyNs: number[] | null = null;
  if (model.bench) {
    ctx.onProgress?.({ kind: 'phase', phase: 'model-only bench' });
    // As many iterations as a session has batches (at least 10), within the budget: an untuned compiler can take
    // seconds per batch.
    const timed = loop ? loop.raw[loop.headline]!.values : open!.queryNs;
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
  return { settings, loop, open, verdicts, mlperfVerdicts, accuracy, modelOnlyNs, memory, layers };
}
