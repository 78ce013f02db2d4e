import { hrtimeClock, type Clock } from '../contracts/clock.js';
import type { LayerTiming, MemorySample, PreparedModel } from '../contracts/engine.js';
import type { TensorMap } from '../contracts/tensor.js';
import { processMetricContext } from '../metrics/process-stats.js';
import type { SweepContext } from './context.js';
import type { Deadline } from './deadline.js';
import { StreamSessions, type LoopResult, type SessionRunner } from './loop.js';
import type { CellPlan } from './plan.js';
import { runOpenLoop, type OpenLoopResult } from './scenarios/open-loop.js';
import { mlperfJudgement, scenarioSettings, type ScenarioSettings } from './scenarios/settings.js';
import { judge, type Verdict } from './scenarios/validity.js';
import { scoreAll, type AccuracyPass } from './score.js';
import { PerformanceTracker } from './tracker.js';
import { energyMeterFor } from '../energy/meter.js';

export interface Measurement {
  settings: ScenarioSettings;
  /** Where the sessions were issued and timed: in a worker (the runtime's process), or the harness's. */
  executor: 'runtime' | 'harness';
  /** Single and multi stream: the sessions' per-query engine times and the transport probe. */
  loop: LoopResult | null;
  /** Server and offline: the open schedule's per-query latencies. */
  open: OpenLoopResult | null;
  /** One verdict per session, by LoadGen's rules for the scenario. */
  verdicts: Verdict[];
  /** The same sessions judged by MLPerf's minimums. */
  mlperfVerdicts: Verdict[];
  accuracy: AccuracyPass;
  /** The runtime's own model-only loop on one input, per iteration ns. */
  modelOnlyNs: number[] | null;
  memory: MemorySample | null;
  layers: LayerTiming[];
}

/** Longest the model-only probe may take: the sessions already measured the same model. */
const MODEL_ONLY_BUDGET_NS = 5e9;

/** The performance set, preprocessed before anything is timed, each batch's preprocessing timed. */
function residentBatches(plan: CellPlan, clock: Clock): { resident: TensorMap[]; preprocessNs: Float64Array } {
  const resident: TensorMap[] = [];
  const preprocessNs = new Float64Array(plan.batches);
  for (let b = 0; b < plan.batches; b++) {
    const raw = plan.dataset.read(b * plan.batchSize, plan.batchSize);
    const t0 = clock();
    resident.push(plan.feeder.feed(raw));
    preprocessNs[b] = Number(clock() - t0);
  }
  return { resident, preprocessNs };
}

/** Single/multi stream: each session is one LoadGen run of back-to-back queries, judged on its engine latencies. */
function streamVerdicts(settings: ScenarioSettings, loop: LoopResult, batchSize: number): Verdict[] {
  const latencies = loop.raw.engine!;
  return loop.sessions.map((session, s) => {
    const mine = latencies.values.filter((_, i) => latencies.sessionOf[i] === s);
    return judge(settings, { latenciesNs: mine, queries: session.batches, samples: session.batches * batchSize, durationNs: session.wall_ns });
  });
}

/**
 * Warmup as a short closed-loop session of the system under test, outside any tracker: `warmup` queries over the
 * first resident batches. The fastest sets the pace the offline scenario plans by (it errs towards longer runs).
 */
async function warmup(model: PreparedModel, batches: number, queries: number, deadline: Deadline): Promise<number> {
  if (queries <= 0) return NaN;
  const t = await deadline.run(model.sut.closedLoop({ batches: Math.min(batches, queries), minQueries: queries, minDurationNs: 0 }));
  return Math.min(...t.engineNs);
}

/**
 * The performance set made resident and warmed up, ready for tracked sessions: a stream scenario's sessions are
 * run one at a time by the rounds (`stream`); server and offline run their whole open schedule here (`open`), their
 * sessions planned together (the peak search, the arrival schedule), so they are not interleaved.
 */
export interface OpenPerformance {
  settings: ScenarioSettings;
  executor: 'runtime' | 'harness';
  stream: StreamSessions | null;
  open: OpenLoopResult | null;
}

/** A replica of a stream contender: another prepared copy of the model with the performance set resident and warm. */
export async function openReplica(ctx: SweepContext, plan: CellPlan, model: PreparedModel, deadline: Deadline): Promise<SessionRunner> {
  const { resident } = residentBatches(plan, ctx.clock ?? hrtimeClock);
  await deadline.run(model.library.load(resident));
  await warmup(model, resident.length, ctx.loaded.experiment.warmup_batches, deadline);
  return { sut: model.sut, metricContext: processMetricContext(model.runsIn.pid) };
}

export async function openPerformance(ctx: SweepContext, plan: CellPlan, model: PreparedModel, deadline: Deadline): Promise<OpenPerformance> {
  const exp = ctx.loaded.experiment;
  const settings = scenarioSettings(exp, plan.cell);
  ctx.onProgress?.({ kind: 'phase', phase: `measure (${settings.kind})` });
  const clock = ctx.clock ?? hrtimeClock;
  const metricContext = processMetricContext(model.runsIn.pid);
  const tracker = new PerformanceTracker(exp.metrics.map((m) => ctx.registry.metric(m)), energyMeterFor(exp.energy, ctx.system));
  const onSession = (index: number): void => ctx.onProgress?.({ kind: 'session', index, of: exp.sessions });
  const { resident, preprocessNs } = residentBatches(plan, clock);
  await deadline.run(model.library.load(resident));
  const warmupNsPerQuery = await warmup(model, resident.length, exp.warmup_batches, deadline);
  const executor = model.runsIn.process === 'worker' ? 'runtime' : 'harness';
  if (settings.kind === 'server' || settings.kind === 'offline') {
    const open = await runOpenLoop({
      sut: model.sut,
      maxConcurrency: model.capabilities.maxConcurrency,
      executor,
      residentBatches: resident.length,
      batchSize: plan.batchSize,
      expectedSamplesPerS: settings.expectedQps ?? (Number.isFinite(warmupNsPerQuery) && warmupNsPerQuery > 0 ? (plan.batchSize * 1e9) / warmupNsPerQuery : 0),
      sessions: exp.sessions,
      settings,
      seed: exp.seed,
      tracker,
      metricContext,
      deadline,
      onSession,
    });
    return { settings, executor, stream: null, open };
  }
  const stream = new StreamSessions({
    sut: model.sut,
    residentBatches: resident.length,
    preprocessNs,
    batchSize: plan.batchSize,
    sessions: exp.sessions,
    minSessionNs: settings.minDurationMs * 1e6,
    minSessionQueries: settings.minQueryCount,
    tracker,
    metricContext,
    deadline,
    clock,
    onSession,
  });
  return { settings, executor, stream, open: null };
}

/**
 * The measure phase after the sessions: the transport probe, then with the set unloaded and outside any tracker the
 * accuracy pass over every sample and the probes (model-only, memory, layers).
 */
export async function finishMeasure(ctx: SweepContext, plan: CellPlan, model: PreparedModel, references: TensorMap[], perf: OpenPerformance, deadline: Deadline): Promise<Measurement> {
  const exp = ctx.loaded.experiment;
  const { settings, executor, open } = perf;
  const loop = perf.stream ? await perf.stream.finish() : null;
  const verdicts = loop ? streamVerdicts(settings, loop, plan.batchSize) : open!.verdicts;
  const mlperfVerdicts = loop ? streamVerdicts(mlperfJudgement(settings), loop, plan.batchSize) : open!.mlperfVerdicts;
  await deadline.run(model.library.unload());
  ctx.onProgress?.({ kind: 'phase', phase: 'score' });
  const accuracy = await scoreAll(plan, model, references, deadline);
  let modelOnlyNs: number[] | null = null;
  if (model.probes.modelOnly) {
    ctx.onProgress?.({ kind: 'phase', phase: 'model-only probe' });
    // As many iterations as a session has batches (at least 10), within the budget: an untuned compiler can take
    // seconds per batch.
    const timed = loop ? loop.raw.engine!.values : open!.queryNs;
    const perBatchNs = timed.reduce((a, v) => a + v, 0) / Math.max(1, timed.length);
    const budget = perBatchNs > 0 ? Math.floor(MODEL_ONLY_BUDGET_NS / perBatchNs) : Infinity;
    const iterations = Math.max(3, Math.min(Math.max(10, plan.batches), budget));
    modelOnlyNs = (await deadline.run(model.probes.modelOnly(plan.firstBatch, iterations))).iterationNs;
  }
  const memory = await deadline.run(model.probes.memory());
  let layers: LayerTiming[] = [];
  if (exp.layer_profile.enabled && model.probes.layers) {
    ctx.onProgress?.({ kind: 'phase', phase: 'layer profile' });
    layers = await deadline.run(model.probes.layers(plan.firstBatch, exp.layer_profile.iterations));
  }
  return { settings, executor, loop, open, verdicts, mlperfVerdicts, accuracy, modelOnlyNs, memory, layers };
}
