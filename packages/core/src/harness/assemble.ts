import { randomUUID } from 'node:crypto';
import type { LayerTiming } from '../contracts/engine.js';
import { LayerTimingSchema, type Boundary, type LayerRow, type Profile, type ScenarioResult, type Stats } from '../contracts/profile.js';
import { cellFingerprint, type Cell } from '../config/keys.js';
import { summarize } from '../stats/summary.js';
import type { SweepContext } from './context.js';
import type { RawSeries, TimedBoundary } from './loop.js';
import type { Measurement } from './measure.js';
import type { Verdict } from './scenarios/validity.js';
import type { CellPlan } from './plan.js';
import { scenarioSettings } from './scenarios/settings.js';
import { summarizeInterference } from '../system/interference.js';
import { aggregateMetrics } from './tracker.js';
import { precisionPeak } from '../system/peak.js';
import { profileEnergy } from '../energy/summary.js';
import { profileVerdicts } from '../publish/verdicts.js';

/** The Profile a cell starts from: identity, config and workload; phases fill in the rest as they learn it. */
export function blankProfile(ctx: SweepContext, cell: Cell): Profile {
  const exp = ctx.loaded.experiment;
  const dataset = ctx.dataset instanceof Error ? null : ctx.dataset;
  return {
    profile_id: randomUUID(),
    run_id: ctx.runId,
    cell_key: cell.key,
    created_at: new Date().toISOString(),
    status: 'ok',
    error: null,
    error_detail: null,
    model: null,
    model_name: cell.model.name,
    engine: {
      name: cell.engine.name,
      label: cell.engine.label ?? null,
      version: null,
      device: cell.engine.device,
      options: cell.engine.options,
      compile_ms: null,
      facts: {},
      precision: null,
      process: null,
      binding: null,
    },
    cell_fingerprint: cellFingerprint(exp, cell),
    dataset: {
      name: dataset?.name ?? exp.dataset.name ?? exp.dataset.kind,
      kind: exp.dataset.kind,
      manifest_sha256: dataset?.manifestSha256 ?? null,
      samples: 0,
      preprocess: cell.model.preprocess ?? exp.preprocess,
    },
    workload: {
      batch_size: cell.batchSize,
      warmup_batches: exp.warmup_batches,
      sessions: exp.sessions,
      samples_per_session: 0,
      samples_scored: 0,
      last_batch: null,
      threads: null,
      // Known before anything runs, so a cell that fails or is skipped still says which scenario it was.
      scenario: scenarioSettings(exp, cell).kind,
      seed: exp.seed,
    },
    correctness: null,
    headline_boundary: null,
    scenario: null,
    throughput: null,
    latency: {},
    generation: null,
    metrics: {},
    interference: null,
    energy: null,
    scores: [],
    achieved_flops: null,
    peak_fraction: null,
    peak: null,
    sessions: [],
    verdicts: null,
    rounds: null,
    samples: [],
    layers: [],
    system: ctx.system,
    config: { experiment: ctx.loaded.raw, cell: { model: cell.model, engine: cell.engine, batch_size: cell.batchSize } },
    command: ctx.command(cell.key),
  };
}

function layerRows(layers: LayerTiming[]): LayerRow[] {
  const timings = layers.map((l) => LayerTimingSchema.parse(l));
  const totalNs = timings.reduce((a, l) => a + l.mean_ns, 0);
  return timings.map((l) => ({ ...l, share: totalNs > 0 ? l.mean_ns / totalNs : 0 }));
}

/** VALID only when every session was; each reason once, with the sessions it held in. */
function pooledReasons(verdicts: Verdict[]): string[] {
  const bySession = new Map<string, number[]>();
  verdicts.forEach((v, i) => v.reasons.forEach((r) => bySession.set(r, [...(bySession.get(r) ?? []), i + 1])));
  return [...bySession].map(([r, sessions]) => `${sessions.length === verdicts.length ? 'every session' : `session ${sessions.join(', ')}`}: ${r}`);
}

function scenarioResult(m: Measurement): ScenarioResult {
  const reasons = pooledReasons(m.verdicts);
  const mlperfReasons = pooledReasons(m.mlperfVerdicts);
  const es = m.verdicts.map((v) => v.earlyStoppingMs).filter((v): v is number => v !== null);
  const { kind, rules, expectedQps, ...rest } = m.open?.settings ?? m.settings;
  const settings = expectedQps === undefined ? rest : { ...rest, expectedQps };
  return {
    kind,
    rules,
    settings,
    executor: m.open?.executor ?? m.executor,
    validity: reasons.length ? 'INVALID' : 'VALID',
    reasons,
    reported: { ...m.verdicts[0]!.reported, value: m.verdicts.reduce((a, v) => a + v.reported.value, 0) / m.verdicts.length },
    early_stopping_ms: es.length === m.verdicts.length && es.length > 0 ? Math.max(...es) : null,
    issue_delay: m.open && m.open.issueDelayNs.length ? summarize(m.open.issueDelayNs) : null,
    peak_search: m.open?.peak ?? [],
    mlperf: { validity: mlperfReasons.length ? 'INVALID' : 'VALID', reasons: mlperfReasons },
  };
}

function rawSamples(m: Measurement): ({ boundary: TimedBoundary } & RawSeries)[] {
  if (m.open) return [{ boundary: 'query', values: m.open.queryNs, sessionOf: m.open.sessionOf }];
  return (Object.entries(m.loop!.raw) as [TimedBoundary, RawSeries][]).map(([boundary, r]) => ({ boundary, ...r }));
}

/** The assemble phase: statistics per session and across sessions, raw samples, metrics, scores, FLOP/s, layers. */
export function assembleProfile(ctx: SweepContext, plan: CellPlan, m: Measurement, profile: Profile): void {
  const latency: Partial<Record<Boundary, Stats>> = {};
  for (const { boundary, values, sessionOf } of rawSamples(m)) {
    if (values.length === 0) continue;
    latency[boundary] = summarize(values);
    let first = 0;
    values.forEach((ns, i) => {
      if (i > 0 && sessionOf[i] !== sessionOf[i - 1]) first = i;
      profile.samples.push({ session: sessionOf[i]!, batch: i - first, boundary, ns });
    });
  }
  if (m.modelOnlyNs) {
    latency.model_only = summarize(m.modelOnlyNs);
    m.modelOnlyNs.forEach((ns, i) => profile.samples.push({ session: -1, batch: i, boundary: 'model_only', ns }));
  }
  const sessions = m.loop?.sessions ?? m.open!.sessions;
  profile.latency = latency;
  profile.headline_boundary = m.loop?.headline ?? 'query';
  profile.scenario = scenarioResult(m);
  profile.workload.scenario = m.settings.kind;
  profile.workload.samples_per_session = sessions[0]?.samples ?? 0;
  // The sessions that ran: the config's count is the fewest, the rounds may have run more (harness/rounds.ts).
  profile.workload.sessions = sessions.length;
  profile.sessions = sessions;
  profile.throughput = summarize(sessions.map((s) => s.throughput_sps));
  profile.metrics = aggregateMetrics(m.loop?.metricValues ?? m.open!.metricValues);
  profile.interference = summarizeInterference(m.loop?.interference ?? m.open!.interference);
  profile.energy = profileEnergy(m.loop?.energy ?? m.open!.energy, sessions.map((s) => s.samples), ctx.loaded.experiment.energy.enabled);
  profile.workload.samples_scored = m.accuracy.samples;
  profile.workload.last_batch = m.accuracy.lastBatch;
  profile.scores = plan.scorers.flatMap((s, k) =>
    s.scorer
      .reduce(m.accuracy.scores[k]!)
      .map((r) => ({ metric: `${r.metric}${s.metricSuffix}`, value: r.value, samples: r.samples, higher_is_better: r.higherIsBetter })),
  );
  profile.scores.push({ metric: 'nonfinite_outputs', value: m.accuracy.nonfinite, samples: m.accuracy.samples, higher_is_better: false });
  if (plan.cell.model.weights !== 'trained') {
    // Accuracy of random weights means nothing; agreement with the reference engine still does.
    profile.scores = profile.scores.filter((s) => s.metric.startsWith('agreement') || s.metric === 'nonfinite_outputs');
  }
  // A quantized model's work is its float FLOPs plus its integer kernels' OPs; both count 2 per multiply-add.
  const flops = (plan.facts.flops_per_sample ?? 0) + (plan.facts.int_ops_per_sample ?? 0);
  if (flops) {
    profile.achieved_flops = flops * profile.throughput.mean;
    // Judged against the peak of the precision the runtime executed (int8 on VNNI/AMX, bf16 on AMX, ...).
    profile.peak = precisionPeak(ctx.system, profile.engine.precision?.executed ?? plan.precision.requested);
    profile.peak_fraction = profile.peak ? profile.achieved_flops / profile.peak.ops_per_s : null;
  }
  profile.layers = layerRows(m.layers);
  profile.verdicts = profileVerdicts(profile);
}
