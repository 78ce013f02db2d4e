import { mkdir } from 'node:fs/promises';
import type { EngineProcess, PreparedModel } from '../../contracts/engine.js';
import type { GenerationSchedule, GenerationTrace } from '../../contracts/generation.js';
import type { MetricValue } from '../../contracts/metric.js';
import type { Profile } from '../../contracts/profile.js';
import type { Cell } from '../../config/keys.js';
import { processMetricContext } from '../../metrics/process-stats.js';
import { summarize } from '../../stats/summary.js';
import { summarizeInterference, type SessionInterference } from '../../system/interference.js';
import type { SweepContext } from '../context.js';
import type { Deadline } from '../deadline.js';
import { InvalidOutputError } from '../errors.js';
import { recordEngine } from '../prepare.js';
import { poissonArrivalsNs } from '../scenarios/schedule.js';
import { aggregateMetrics, PerformanceTracker } from '../tracker.js';
import { energyMeterFor } from '../../energy/meter.js';
import { profileEnergy, type TrackedEnergy } from '../../energy/summary.js';
import { generationFigures, type GenerationSession } from './figures.js';
import { describeDivergence, describeRankFailure, firstDivergence, GATE_TOP_K, gateRule, judgeRanks } from './gate.js';
import { planGenerate, type GeneratePlan } from './plan.js';
import { roofline } from './roofline.js';
import { generatorOf } from './run.js';
import { promptTextsFor, searchCapacity, servedVerdict } from './served.js';
import { scenarioSettings } from '../scenarios/settings.js';
import { memoryBandwidth } from '../../system/memory-bandwidth.js';
import { precisionPeak } from '../../system/peak.js';

async function prepareOn(plan: GeneratePlan, engine: GeneratePlan['engine'], options: Record<string, unknown>, seed: number, deadline: Deadline, device: string, process: EngineProcess): Promise<PreparedModel> {
  await mkdir(plan.workDir, { recursive: true });
  return deadline.run(
    engine.prepare({
      model: { name: plan.cell.model.name, path: plan.modelPath, workDir: plan.workDir },
      batchSize: 1,
      device,
      options,
      process,
      // The sequence axis stays symbolic: prefill feeds the whole prompt, decode one token.
      inputs: plan.facts.inputs,
      seed,
      precision: engine === plan.engine ? plan.precision.requested : plan.precision.model,
      signal: deadline.signal,
    }),
  );
}

/** The reference engine's greedy continuations of the gate's prompts, once per model and settings in a sweep. */
const referenceCache = new WeakMap<SweepContext, Map<string, Promise<number[][]>>>();

function referenceContinuations(ctx: SweepContext, plan: GeneratePlan, schedule: GenerationSchedule, deadline: Deadline): Promise<number[][]> {
  const exp = ctx.loaded.experiment;
  const cache = referenceCache.get(ctx) ?? new Map<string, Promise<number[][]>>();
  referenceCache.set(ctx, cache);
  const key = `${plan.modelPath}\0${schedule.prompts.length}\0${schedule.maxNewTokens}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = (async () => {
      const engine = ctx.registry.engine(exp.reference_engine);
      const process = exp.engines.find((e) => e.name === engine.name)?.process ?? engine.processes[0]!;
      const availability = await engine.probe(process);
      if (!availability.available) throw new Error(`reference engine ${engine.name} is unavailable (${availability.reason}); set reference_engine to an available engine. Fix: ${availability.fix}`);
      const prepared = await prepareOn(plan, engine, engine.optionsSchema.parse({}), exp.seed, deadline, 'cpu', process);
      try {
        return (await generatorOf(prepared, plan.lm.cacheShape, deadline.signal).generate(schedule)).map((t) => t.tokens);
      } finally {
        await prepared.dispose();
      }
    })();
    hit.catch(() => cache.delete(key));
    cache.set(key, hit);
  }
  return deadline.run(hit);
}

/** Medians of what the runtime reported per request (its own counters), keyed as it names them; null when it reports none. */
function runtimeReported(traces: GenerationTrace[]): Record<string, number> | null {
  const keys = [...new Set(traces.flatMap((t) => Object.keys(t.runtime ?? {})))];
  if (keys.length === 0) return null;
  return Object.fromEntries(keys.map((k) => [k, summarize(traces.flatMap((t) => (t.runtime?.[k] === undefined ? [] : [t.runtime[k]]))).p50]));
}

/**
 * A generate cell: plan → prepare → gate (greedy continuations against the reference engine, before anything is
 * timed) → warmup → tracked sessions of the whole prompt set → perplexity on the held-out text → the Profile's
 * generation block. Returns the prepared model through `hold` as soon as it exists, so the caller disposes it.
 */
export async function runGenerateCell(ctx: SweepContext, cell: Cell, profile: Profile, deadline: Deadline, hold: (m: PreparedModel) => void): Promise<void> {
  const exp = ctx.loaded.experiment;
  const plan = await planGenerate(ctx, cell, profile, deadline);
  ctx.onProgress?.({ kind: 'phase', phase: 'compile' });
  const model = await prepareOn(plan, plan.engine, plan.options, exp.seed, deadline, cell.engine.device, plan.process);
  hold(model);
  recordEngine(profile, plan, model);
  const gen = generatorOf(model, plan.lm.cacheShape, deadline.signal);
  const { prompts } = plan.tokens;
  const base = { maxNewTokens: plan.cfg.max_new_tokens, cacheShape: plan.lm.cacheShape, ...promptTextsFor(gen.serves, plan.dataset, prompts.length) };
  let gate: NonNullable<Profile['generation']>['gate'] = null;
  if (plan.cfg.gate_prompts > 0 && cell.engine.name !== exp.reference_engine) {
    ctx.onProgress?.({ kind: 'phase', phase: 'verify (against the reference continuations)' });
    const schedule: GenerationSchedule = { ...base, prompts: prompts.slice(0, plan.cfg.gate_prompts), arrivalsNs: null, concurrency: 1 };
    const expected = await referenceContinuations(ctx, plan, schedule, deadline);
    const got = (await deadline.run(gen.generate(schedule))).map((t) => t.tokens);
    const divergence = firstDivergence(expected, got);
    const executed = profile.engine.precision?.executed ?? 'fp32';
    const rank = gen.rankTokens;
    const gated = { reference_engine: exp.reference_engine, prompts: schedule.prompts.length, first_divergence: divergence };
    if (gateRule(executed, profile.engine.precision?.weights ?? null, rank !== null) === 'exact' || rank === null) {
      gate = { ...gated, passed: divergence === null, rule: 'exact', k: null, worst_rank: null };
      if (divergence) throw new InvalidOutputError(describeDivergence(divergence, exp.reference_engine, cell.engineLabel));
    } else {
      const ranks = await deadline.run(Promise.all(expected.map((continuation, r) => rank(schedule.prompts[r]!, continuation))));
      const { worst, failure } = judgeRanks(ranks, expected, GATE_TOP_K);
      gate = { ...gated, passed: failure === null, rule: 'top_k', k: GATE_TOP_K, worst_rank: worst };
      if (failure) throw new InvalidOutputError(describeRankFailure(failure, exp.reference_engine, cell.engineLabel, executed, GATE_TOP_K));
    }
  }
  ctx.onProgress?.({ kind: 'phase', phase: `measure (generate, ${plan.scenario})` });
  const warm = Math.min(exp.warmup_batches, prompts.length);
  if (warm > 0) await deadline.run(gen.generate({ ...base, prompts: prompts.slice(0, warm), arrivalsNs: null, concurrency: 1 }));
  const metricContext = processMetricContext(model.runsIn.pid);
  const tracker = new PerformanceTracker(exp.metrics.map((m) => ctx.registry.metric(m)), energyMeterFor(exp.energy, ctx.system));
  const sessions: GenerationSession[] = [];
  const metricValues: MetricValue[][] = [];
  const interference: SessionInterference[] = [];
  const energy: TrackedEnergy[] = [];
  for (let s = 0; s < exp.sessions; s++) {
    ctx.onProgress?.({ kind: 'session', index: s, of: exp.sessions });
    const arrivalsNs = plan.requestRate === null ? null : poissonArrivalsNs(prompts.length, plan.requestRate, exp.seed + s).slice(0, prompts.length);
    await tracker.start(metricContext);
    const traces = await deadline.run(gen.generate({ ...base, prompts, arrivalsNs, concurrency: plan.concurrency }));
    const tracked = await tracker.stop(metricContext);
    metricValues.push(tracked.metrics);
    if (tracked.interference) interference.push(tracked.interference);
    if (tracked.energy) energy.push(tracked.energy);
    sessions.push({ traces, metrics: Object.fromEntries(tracked.metrics.map((v) => [v.name, v.value])) });
  }
  let perplexity: NonNullable<Profile['generation']>['perplexity'] = null;
  const held = plan.tokens.heldOut;
  const score = gen.scoreText;
  let perplexityUnavailable: string | null = null;
  if (plan.cfg.perplexity && held && held.length > 1 && !score) perplexityUnavailable = `${cell.engineLabel} runs its runtime's own generate loop and gives no logits`;
  if (plan.cfg.perplexity && held && held.length > 1 && score) {
    ctx.onProgress?.({ kind: 'phase', phase: 'score (perplexity)' });
    const { window } = plan;
    const scored = await deadline.run(score(held, window));
    const nll = scored.nllSum / scored.predicted;
    // Bits per byte compare across tokenizers: the same text's total surprise over its UTF-8 bytes.
    const bytes = plan.tokens.heldOutBytesPredicted;
    const bitsPerByte = bytes ? scored.nllSum / Math.LN2 / bytes : null;
    perplexity = { nll_nats: nll, perplexity: Math.exp(nll), tokens: scored.predicted, window, uniform_nll_nats: Math.log(plan.tokens.tokenizer.vocab_size), bits_per_byte: bitsPerByte, bytes: bytes ?? null };
    profile.scores.push({ metric: 'perplexity', value: Math.exp(nll), samples: scored.predicted, higher_is_better: false });
    profile.scores.push({ metric: 'nll_nats', value: nll, samples: scored.predicted, higher_is_better: false });
  }
  const figures = generationFigures(sessions, prompts, plan.cfg, plan.scenario, plan.concurrency, plan.requestRate);
  // PBH's cache graph holds its whole capacity (fp32); a Hugging Face cache grows to the longest request's tokens.
  const kvBytes = plan.lm.layout === 'pbh_cache' ? 2 * plan.lm.cacheShape.reduce((a, d) => a * d, 1) * 4 : plan.lm.kvBytesPerToken * (Math.max(...prompts.map((p) => p.length)) + plan.cfg.max_new_tokens);
  // A server's point: how its tokens were counted, and whether the client kept its schedule (else INVALID).
  const served = servedVerdict(sessions.map((s) => s.traces), figures.result, gen.serves);
  profile.generation = {
    ...figures.result,
    kv_cache_bytes: kvBytes,
    kv_cache_bytes_in_flight: kvBytes * plan.concurrency,
    perplexity,
    gate,
    tokenizer: plan.tokens.tokenizer,
    prompt_source: plan.dataset.form,
    model_layout: plan.lm.layout,
    served: gen.serves,
    roofline: roofline({
      parameters: plan.facts.parameters,
      executed: profile.engine.precision?.executed ?? plan.precision.requested,
      lm: plan.lm,
      maxNewTokens: plan.cfg.max_new_tokens,
      scenario: plan.scenario,
      requests: figures.result.per_request,
      peak: precisionPeak(ctx.system, profile.engine.precision?.executed ?? plan.precision.requested),
      bandwidth: memoryBandwidth(),
    }),
    runtime_reported: runtimeReported(sessions[0]?.traces ?? []),
    perplexity_unavailable: perplexityUnavailable,
    token_count: served?.tokenCount ?? null,
    issue: served?.issue ?? null,
    capacity: null,
  };
  if (served) profile.scenario = served.scenario;
  if (served && scenarioSettings(exp, cell).findPeak) {
    ctx.onProgress?.({ kind: 'phase', phase: 'capacity search (Poisson rates against the SLOs)' });
    const slo = { ttft_ms: plan.cfg.slo?.ttft_ms ?? null, itl_ms: plan.cfg.slo?.itl_ms ?? null };
    const found = await searchCapacity({ schedule: { ...base, prompts, concurrency: plan.concurrency }, startQps: plan.requestRate ?? 1, slo, seed: exp.seed, run: (s) => deadline.run(gen.generate(s)) });
    served.scenario.peak_search = found.points;
    profile.generation.capacity = { rate_rps: found.rate, points: found.points.length, percentile: 0.99 };
  }
  // Ranked like any Profile: throughput is output tokens/s, the headline latency a request's end to end.
  profile.sessions = figures.sessions;
  profile.throughput = summarize(figures.throughputs);
  profile.latency = { query: summarize(figures.e2eNs) };
  profile.samples = figures.samples;
  profile.headline_boundary = 'query';
  profile.metrics = aggregateMetrics(metricValues);
  profile.interference = summarizeInterference(interference);
  // A generate session's samples are its requests: joules per request.
  profile.energy = profileEnergy(energy, figures.sessions.map((s) => s.samples), exp.energy.enabled);
  const perRequest = profile.energy?.joules_per_sample ?? null;
  const requests = figures.sessions.reduce((a, s) => a + s.samples, 0);
  profile.generation.joules_per_output_token = perRequest === null || profile.generation.output_tokens === 0 ? null : (perRequest * requests) / profile.generation.output_tokens;
  profile.engine.facts = { ...profile.engine.facts, generation_executor: gen.executor };
}
