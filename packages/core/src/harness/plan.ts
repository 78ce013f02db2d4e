import path from 'node:path';
import type { Dataset } from '../contracts/dataset.js';
import type { Availability, Engine, EngineProcess } from '../contracts/engine.js';
import { precisionOfDtypes, type Precision } from '../contracts/precision.js';
import type { ModelFacts } from '../contracts/profile.js';
import type { Scorer } from '../contracts/scorer.js';
import type { TensorMap, TensorSpec } from '../contracts/tensor.js';
import type { Cell } from '../config/keys.js';
import type { Experiment } from '../config/schema.js';
import { modelFactsOnce, modelPath, probeOnce, type SweepContext } from './context.js';
import { CellConfigError, EngineUnavailableError } from './errors.js';
import { bindInputs, describeSource, type Feeder } from './feeds.js';
import { factsAtShapes } from './model-facts.js';
import type { Deadline } from './deadline.js';
import { checkFit, concreteSpec } from './fit.js';
import type { Profile } from '../contracts/profile.js';
import type { Registry } from '../plugins/registry.js';

/** Everything a cell needs once it is known to be runnable: the outcome of the plan phase. */
export interface CellPlan {
  cell: Cell;
  engine: Engine;
  /** Engine options parsed by the engine's own zod schema, defaults filled in. */
  options: Record<string, unknown>;
  /** Where the model runs: the entry's `process`, else the engine's default. */
  process: EngineProcess;
  facts: ModelFacts;
  modelPath: string;
  workDir: string;
  dataset: Dataset;
  feeder: Feeder;
  /** Input specs with symbolic dims resolved, as the harness feeds them. */
  inputs: TensorSpec[];
  batchSize: number;
  /** Whole batches in the performance set, the resident samples every timed session runs. */
  batches: number;
  /** The feeds of the first batch: the gate's input, the model-only bench's and the layer profile's. */
  firstBatch: TensorMap;
  scorers: { scorer: Scorer; output: string; metricSuffix: string }[];
  precision: { model: Precision; requested: Precision };
}

export function parseOptions(engine: Engine, cell: Cell): Record<string, unknown> {
  const parsed = engine.optionsSchema.safeParse(cell.engine.options);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `engines[${cell.engineLabel}].options.${i.path.join('.')}: ${i.message}`);
    throw new CellConfigError(`invalid options for engine ${engine.name}: ${issues.join('; ')}`);
  }
  return parsed.data;
}

/** The model's own precision always runs; anything else must be one the engine can be asked for. */
export function resolvePrecision(engine: Engine, cell: Cell, facts: ModelFacts): CellPlan['precision'] {
  // A quantized graph (QDQ, QLinear*, integer kernels: int8/uint8 weights) is an int8 model behind float inputs;
  // weight-only compression (MatMulNBits, dequantized constant weights) leaves the arithmetic in the I/O's float type.
  const quantized = (facts.quantization === 'int8' || facts.quantization === 'uint8') && facts.quantization_style !== 'weight_only';
  const model = quantized ? 'int8' : precisionOfDtypes([...facts.outputs, ...facts.inputs].map((t) => t.dtype));
  const requested = cell.engine.precision ?? model;
  if (requested !== model && !engine.precisions.includes(requested)) {
    throw new CellConfigError(
      `engines[${cell.engineLabel}].precision: ${engine.name} cannot execute ${requested}; it supports ${[...new Set([model, ...engine.precisions])].join(', ')}. Remove precision (the model's own, ${model}) or pick one of those.`,
    );
  }
  return { model, requested };
}

/** Default ceiling of the performance set's preprocessed tensors. */
const RESIDENT_BYTES = 1 << 30;

/** Whole batches in the performance set: `performance_samples`, else as many as fit in RESIDENT_BYTES, at least one. */
function performanceBatches(exp: Experiment, size: number, batch: number, first: TensorMap): number {
  const whole = Math.floor(size / batch);
  const bytesPerBatch = Object.values(first).reduce((a, t) => a + t.data.byteLength, 0);
  const wanted = exp.performance_samples !== undefined ? Math.floor(exp.performance_samples / batch) : Math.floor(RESIDENT_BYTES / Math.max(1, bytesPerBatch));
  return Math.max(1, Math.min(whole, wanted));
}

/** Each configured scorer with the output it reads (named, else the first) and the suffix its metric then carries. */
function planScorers(exp: Experiment, registry: Registry, facts: ModelFacts, cell: Cell, dataset: Dataset): CellPlan['scorers'] {
  const outputs = facts.outputs.map((o) => o.name);
  return exp.scorers.map((entry, i) => {
    const name = typeof entry === 'string' ? entry : entry.name;
    const output = typeof entry === 'string' ? outputs[0] ?? 'output' : entry.output;
    if (!outputs.includes(output) && outputs.length > 0) {
      throw new CellConfigError(`scorers[${i}].output: model "${cell.model.name}" has no output "${output}"; its outputs are ${outputs.join(', ')}.`);
    }
    const scorer = registry.scorer(name);
    const k = /^top(\d+)$/.exec(name)?.[1];
    const dims = facts.outputs.find((o) => o.name === output)?.shape.slice(1) ?? [];
    const classes = dims.every((d): d is number => typeof d === 'number') ? dims.reduce((a, d) => a * d, 1) : undefined;
    if (k !== undefined && classes !== undefined && Number(k) >= classes) {
      throw new CellConfigError(`scorers[${i}]: ${name} on model "${cell.model.name}" output "${output}" of ${classes} classes is always right; use a k below ${classes}.`);
    }
    if (scorer.needsLabels && !dataset.hasLabels) {
      throw new CellConfigError(`scorer ${scorer.name} needs labels, but dataset ${dataset.name} has none; remove it from scorers or add labels.`);
    }
    return { scorer, output, metricSuffix: typeof entry === 'string' ? '' : `@${output}` };
  });
}

/** The cell's engine, its parsed options and where it runs, probed there (unavailable: EngineUnavailableError). */
export async function planEngine(ctx: SweepContext, cell: Cell, profile: Profile, deadline: Deadline): Promise<{ engine: Engine; options: Record<string, unknown>; process: EngineProcess; availability: Availability & { available: true } }> {
  const engine = ctx.registry.engine(cell.engine.name);
  const options = parseOptions(engine, cell);
  const process = cell.engine.process ?? engine.processes[0]!;
  if (!engine.processes.includes(process)) {
    throw new CellConfigError(`engines[${cell.engineLabel}].process: ${engine.name} cannot run in the ${process}; it runs in: ${engine.processes.join(', ')}. Remove process or pick one of those.`);
  }
  // Raced against the deadline so that Ctrl-C during a slow probe is an interruption, not an unavailable engine.
  const availability = await deadline.run(probeOnce(ctx, engine, process));
  if (!availability.available) {
    throw new EngineUnavailableError(`engine ${engine.name} (in the ${process}) is not available here: ${availability.reason}. Fix: ${availability.fix}`);
  }
  profile.engine.version = availability.version;
  return { engine, options, process, availability };
}

/** The plan phase: validates the cell, probes the engine, analyses the model and checks the data fits it. */
export async function planCell(ctx: SweepContext, cell: Cell, profile: Profile, deadline: Deadline): Promise<CellPlan> {
  const exp = ctx.loaded.experiment;
  if (!Number.isInteger(cell.batchSize) || cell.batchSize <= 0) {
    throw new CellConfigError(`batch_sizes: ${cell.batchSize} is not a valid batch size; use a positive integer such as 1, 8 or 32.`);
  }
  const { engine, options, process, availability } = await planEngine(ctx, cell, profile, deadline);
  if (!engine.devices.includes(cell.engine.device) && !availability.devices.includes(cell.engine.device)) {
    throw new EngineUnavailableError(`engine ${engine.name} has no device "${cell.engine.device}"; it offers ${availability.devices.join(', ')}.`);
  }
  ctx.onProgress?.({ kind: 'phase', phase: 'analyse' });
  const facts = await deadline.run(modelFactsOnce(ctx, cell.model));
  profile.model = facts;
  const precision = resolvePrecision(engine, cell, facts);
  if (ctx.dataset instanceof Error) throw ctx.dataset;
  const dataset = ctx.dataset;
  const feeder = bindInputs(cell.model, facts, dataset, cell.model.preprocess ?? exp.preprocess);
  const B = cell.batchSize;
  if (dataset.size < B) {
    throw new CellConfigError(`dataset ${dataset.name} has ${dataset.size} samples, fewer than batch size ${B}; use a smaller batch size or more data.`);
  }
  const firstBatch = feeder.feed(dataset.read(0, B));
  for (const b of feeder.bindings) {
    const where = describeSource(b, dataset.name, feeder.preprocessSteps);
    checkFit(firstBatch[b.input.name]!, b.input, B, `model "${cell.model.name}"`, { where, configLine: b.configLine, batchAxis: b.batchAxis, fromDataset: b.source.kind === 'field' });
  }
  const inputs = feeder.bindings.map((b) => concreteSpec(b.input, B, firstBatch[b.input.name], b.batchAxis));
  // The model's figures (FLOPs, achieved FLOP/s) at the shapes this cell runs, where the file leaves axes open.
  const cellFacts = await deadline.run(factsAtShapes(ctx, cell.model, facts, feeder, firstBatch, B));
  profile.model = cellFacts;
  const batches = performanceBatches(exp, dataset.size, B, firstBatch);
  profile.dataset.samples = dataset.size;
  profile.workload.samples_per_session = batches * B;
  const scorers = planScorers(exp, ctx.registry, facts, cell, dataset);
  return {
    cell,
    engine,
    options,
    process,
    facts: cellFacts,
    modelPath: modelPath(ctx, cell.model),
    workDir: path.join(ctx.workRoot, cell.key),
    dataset,
    feeder,
    inputs,
    batchSize: B,
    batches,
    firstBatch,
    scorers,
    precision,
  };
}
