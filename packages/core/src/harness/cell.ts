import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Availability, Engine, PreparedModel } from '../contracts/engine.js';
import type { Dataset } from '../contracts/dataset.js';
import type { Boundary, ModelFacts, Profile, ProfileStatus, Stats, SystemInfo } from '../contracts/profile.js';
import type { Scorer } from '../contracts/scorer.js';
import type { Tensor, TensorMap } from '../contracts/tensor.js';
import type { Cell } from '../config/keys.js';
import type { LoadedExperiment } from '../config/load.js';
import { buildPreprocessor } from '../dataset/preprocess.js';
import { cpuTimeUs, rssBytes } from '../metrics/process-stats.js';
import type { Registry } from '../plugins/registry.js';
import { summarize } from '../stats/summary.js';
import { compareOutputs } from './correctness.js';
import { Deadline } from './deadline.js';
import { CellTimeoutError, EngineUnavailableError, InterruptedError, InvalidOutputError, errorDetail } from './errors.js';
import { checkFit, concreteSpec } from './fit.js';
import { runLoop } from './loop.js';
import type { ModelAnalysis } from '../model/index.js';
import { ReferenceOutputs } from './reference.js';
import { PerformanceTracker, aggregateMetrics } from './tracker.js';

/** What every cell of one sweep shares. */
export interface SweepContext {
  runId: string;
  loaded: LoadedExperiment;
  registry: Registry;
  system: SystemInfo;
  dataset: Dataset | Error;
  models: Map<string, Promise<{ facts: ModelFacts; analysis: ModelAnalysis }>>;
  probes: Map<string, Promise<Availability>>;
  reference: ReferenceOutputs;
  workRoot: string;
  command: (cellKey: string) => string;
  onProgress?: (e: { kind: 'phase'; phase: string } | { kind: 'session'; index: number; of: number }) => void;
}

export function probeOnce(ctx: SweepContext, engine: Engine): Promise<Availability> {
  let p = ctx.probes.get(engine.name);
  if (!p) {
    p = engine.probe().catch((e: unknown): Availability => ({ available: false, reason: (e as Error).message, fix: 'npx pbh doctor' }));
    ctx.probes.set(engine.name, p);
  }
  return p;
}

function statusOf(e: unknown): ProfileStatus {
  if (e instanceof CellTimeoutError || (e as Error).name === 'WorkerTimeoutError') return 'timeout';
  if (e instanceof InvalidOutputError) return 'invalid_output';
  if (e instanceof EngineUnavailableError) return 'skipped';
  return 'failed';
}

function validateOptions(engine: Engine, cell: Cell): Record<string, unknown> {
  const parsed = engine.optionsSchema.safeParse(cell.engine.options);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `engines[${cell.engine.name}].options.${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid options for engine ${engine.name}: ${issues.join('; ')}`);
  }
  return parsed.data;
}

/** Runs one cell to a Profile. Never throws: every failure becomes a Profile with its status and error. */
export async function runCell(ctx: SweepContext, cell: Cell, deadline: Deadline): Promise<Profile> {
  const exp = ctx.loaded.experiment;
  const modelPath = path.resolve(ctx.loaded.dir, cell.model.path);
  const profile: Profile = {
    profile_id: randomUUID(),
    run_id: ctx.runId,
    cell_key: cell.key,
    created_at: new Date().toISOString(),
    status: 'ok',
    error: null,
    error_detail: null,
    model: null,
    model_name: cell.model.name,
    engine: { name: cell.engine.name, version: null, device: cell.engine.device, options: cell.engine.options, compile_ms: null, facts: {} },
    dataset: {
      name: ctx.dataset instanceof Error ? (exp.dataset.name ?? exp.dataset.kind) : ctx.dataset.name,
      kind: exp.dataset.kind,
      manifest_sha256: ctx.dataset instanceof Error ? null : ctx.dataset.manifestSha256,
      samples: 0,
      preprocess: cell.model.preprocess ?? exp.preprocess,
    },
    workload: {
      batch_size: cell.batchSize,
      warmup_batches: exp.warmup_batches,
      sessions: exp.sessions,
      samples_per_session: 0,
      threads: null,
      scenario: 'offline',
      seed: exp.seed,
    },
    correctness: null,
    throughput: null,
    latency: {},
    metrics: {},
    scores: [],
    achieved_flops: null,
    peak_fraction: null,
    sessions: [],
    samples: [],
    layers: [],
    system: ctx.system,
    config: { experiment: ctx.loaded.raw, cell: { model: cell.model, engine: cell.engine, batch_size: cell.batchSize } },
    command: ctx.command(cell.key),
  };
  const workDir = path.join(ctx.workRoot, cell.key);
  let prepared: PreparedModel | undefined;
  try {
    if (!Number.isInteger(cell.batchSize) || cell.batchSize <= 0) {
      throw new Error(`batch_sizes: ${cell.batchSize} is not a valid batch size; use a positive integer such as 1, 8 or 32.`);
    }
    const engine = ctx.registry.engine(cell.engine.name);
    const options = validateOptions(engine, cell);
    const availability = await probeOnce(ctx, engine);
    if (!availability.available) {
      throw new EngineUnavailableError(`engine ${engine.name} is not available here: ${availability.reason}. Fix: ${availability.fix}`);
    }
    profile.engine.version = availability.version;
    if (!engine.devices.includes(cell.engine.device) && !availability.devices.includes(cell.engine.device)) {
      throw new EngineUnavailableError(`engine ${engine.name} has no device "${cell.engine.device}"; it offers ${availability.devices.join(', ')}.`);
    }
    ctx.onProgress?.({ kind: 'phase', phase: 'analyse' });
    let modelPromise = ctx.models.get(modelPath);
    if (!modelPromise) {
      modelPromise = import('./model-facts.js').then((m) => m.modelFacts(cell.model, modelPath));
      ctx.models.set(modelPath, modelPromise);
    }
    const { facts } = await modelPromise;
    profile.model = facts;
    if (ctx.dataset instanceof Error) throw ctx.dataset;
    const dataset = ctx.dataset;
    const inputName = cell.model.input ?? facts.inputs[0]?.name;
    const inputSpec = facts.inputs.find((i) => i.name === inputName);
    if (!inputName || !inputSpec) {
      throw new Error(`model "${cell.model.name}" has no input "${inputName}"; its inputs are ${facts.inputs.map((i) => i.name).join(', ')}.`);
    }
    const outputName = facts.outputs[0]?.name ?? 'output';
    const datasetInput = dataset.inputNames.includes(inputName) ? inputName : dataset.inputNames[0]!;
    const preprocessor = buildPreprocessor(cell.model.preprocess ?? exp.preprocess, datasetInput);
    const B = cell.batchSize;
    const batches = Math.floor(dataset.size / B);
    if (batches === 0) {
      throw new Error(`dataset ${dataset.name} has ${dataset.size} samples, fewer than batch size ${B}; use a smaller batch size or more data.`);
    }
    profile.dataset.samples = dataset.size;
    profile.workload.samples_per_session = batches * B;
    const firstRaw = dataset.read(0, B);
    const firstX = preprocessor.apply(firstRaw);
    checkFit(firstX, inputSpec, B, preprocessor.describe());
    const scorers: Scorer[] = exp.scorers.map((s) => ctx.registry.scorer(s));
    for (const s of scorers) {
      if (s.needsLabels && !dataset.hasLabels) throw new Error(`scorer ${s.name} needs labels, but dataset ${dataset.name} has none; remove it from scorers or add labels.`);
    }
    const tracker = new PerformanceTracker(exp.metrics.map((m) => ctx.registry.metric(m)));

    await mkdir(workDir, { recursive: true });
    ctx.onProgress?.({ kind: 'phase', phase: 'compile' });
    prepared = await deadline.run(
      engine.prepare({
        model: { name: cell.model.name, path: modelPath, workDir },
        batchSize: B,
        device: cell.engine.device,
        options,
        inputs: facts.inputs.map((i) => concreteSpec(i, B, i.name === inputName ? firstX : undefined)),
        seed: exp.seed,
        signal: deadline.signal,
      }),
    );
    const model = prepared;
    profile.engine.compile_ms = model.compileMs;
    profile.engine.facts = model.facts ?? {};
    const threads = (model.facts?.threads ?? model.facts?.intraOpNumThreads) as number | undefined;
    profile.workload.threads = typeof threads === 'number' ? threads : null;

    const feed = (x: Tensor): TensorMap => ({ [inputName]: x });
    const referenceKey = { modelPath, model: cell.model, batchSize: B, inputName, preprocessor, dataset, facts };
    if (engine.name !== exp.reference_engine) {
      ctx.onProgress?.({ kind: 'phase', phase: 'verify' });
      const expected = await deadline.run(ctx.reference.batch(referenceKey, 0));
      const got = await deadline.run(model.predict(feed(firstX)));
      const cmp = compareOutputs(got.outputs, expected, exp.tolerance.atol, exp.tolerance.rtol);
      profile.correctness = {
        reference_engine: exp.reference_engine,
        max_abs_error: cmp.maxAbsError,
        max_rel_error: cmp.maxRelError,
        atol: exp.tolerance.atol,
        rtol: exp.tolerance.rtol,
        passed: cmp.passed,
      };
      if (!cmp.passed) {
        throw new InvalidOutputError(
          `outputs differ from ${exp.reference_engine} on the first batch: max abs error ${cmp.maxAbsError.toExponential(3)}, max rel error ${cmp.maxRelError.toExponential(3)} (atol ${exp.tolerance.atol}, rtol ${exp.tolerance.rtol})${cmp.mismatch ? `: ${cmp.mismatch}` : ''}. Not timed: a wrong answer is not a speed result.`,
        );
      }
    }

    // Reference outputs for scorers are computed now, and the reference engine released, so that neither its runs
    // nor its idle thread pool and memory are inside the measured sessions.
    const references: TensorMap[] = [];
    if (scorers.some((s) => s.needsReference)) {
      for (let b = 0; b < batches; b++) references.push(await deadline.run(ctx.reference.batch(referenceKey, b)));
    }
    await ctx.reference.release();

    ctx.onProgress?.({ kind: 'phase', phase: 'measure' });
    const pid = model.pid?.() ?? process.pid;
    const loop = await runLoop({
      prepared: model,
      dataset,
      preprocessor,
      inputName,
      outputName,
      batchSize: B,
      batches,
      warmupBatches: exp.warmup_batches,
      sessions: exp.sessions,
      scorers,
      references,
      tracker,
      metricContext: (recorded) => ({ pid, sampleRssBytes: () => rssBytes(pid), cpuTimeUs: () => cpuTimeUs(pid), recorded }),
      deadline,
      onSession: (index) => ctx.onProgress?.({ kind: 'session', index, of: exp.sessions }),
    });

    const latency: Partial<Record<Boundary, Stats>> = {};
    for (const [boundary, values] of Object.entries(loop.raw) as [Exclude<Boundary, 'model_only'>, Float64Array][]) {
      if (values.length === 0) continue;
      latency[boundary] = summarize(values);
      values.forEach((ns, i) => profile.samples.push({ session: Math.floor(i / batches), batch: i % batches, boundary, ns }));
    }
    if (model.bench) {
      ctx.onProgress?.({ kind: 'phase', phase: 'model-only bench' });
      // As many iterations as a session has batches (at least 10), but no more than ~5 s of them: an untuned
      // compiler can take seconds per batch, and the sessions already measured the same model.
      const perBatchNs = latency.predict?.mean ?? 0;
      const budget = perBatchNs > 0 ? Math.floor(5e9 / perBatchNs) : Infinity;
      const iterations = Math.max(3, Math.min(Math.max(10, batches), budget));
      const bench = await deadline.run(model.bench(feed(firstX), iterations));
      latency.model_only = summarize(bench.iterationNs);
      bench.iterationNs.forEach((ns, i) => profile.samples.push({ session: -1, batch: i, boundary: 'model_only', ns }));
    }
    profile.latency = latency;
    profile.sessions = loop.sessions;
    profile.throughput = summarize(loop.sessions.map((s) => s.throughput_sps));
    profile.metrics = aggregateMetrics(loop.sessions.map((s) => s.metrics));
    if (model.memory) {
      const mem = await deadline.run(model.memory());
      profile.metrics.worker_peak_rss_mb = mem.rssBytes / 2 ** 20;
      if (mem.deviceBytes !== undefined) profile.metrics.device_peak_mb = mem.deviceBytes / 2 ** 20;
    }
    profile.scores = scorers.flatMap((s, k) =>
      s.reduce(loop.scores[k]!).map((r) => ({ metric: r.metric, value: r.value, samples: r.samples, higher_is_better: r.higherIsBetter })),
    );
    if (cell.model.weights !== 'trained') {
      // Accuracy of random weights means nothing; agreement with the reference engine still does.
      profile.scores = profile.scores.filter((s) => s.metric.startsWith('agreement'));
    }
    if (facts.flops_per_sample) {
      profile.achieved_flops = facts.flops_per_sample * profile.throughput.mean;
      profile.peak_fraction = ctx.system.peak_flops ? profile.achieved_flops / ctx.system.peak_flops : null;
    }
    if (exp.layer_profile.enabled && model.layerProfile) {
      ctx.onProgress?.({ kind: 'phase', phase: 'layer profile' });
      const layers = await deadline.run(model.layerProfile(feed(firstX), exp.layer_profile.iterations));
      const totalNs = layers.reduce((a, l) => a + l.meanNs, 0);
      profile.layers = layers.map((l) => ({
        name: l.name,
        op_type: l.opType,
        mean_ns: l.meanNs,
        calls: l.calls,
        share: totalNs > 0 ? l.meanNs / totalNs : 0,
        input_shapes: l.inputShapes ?? null,
        output_shapes: l.outputShapes ?? null,
      }));
    }
  } catch (e) {
    profile.status = statusOf(e);
    profile.error = (e as Error).message ?? String(e);
    profile.error_detail = errorDetail(e);
    const said = prepared?.diagnostics?.();
    if (said && !profile.error.includes(said)) {
      profile.error_detail = [`engine process output (tail):\n${said}`, profile.error_detail].filter(Boolean).join('\n\n');
    }
    if (e instanceof InterruptedError) profile.error = `${profile.error}; the sweep stopped here`;
  } finally {
    if (prepared) await prepared.dispose().catch(() => undefined);
    await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
  }
  return profile;
}
