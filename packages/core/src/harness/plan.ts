import path from 'node:path';
import type { Dataset, Preprocessor } from '../contracts/dataset.js';
import type { Engine } from '../contracts/engine.js';
import { precisionOfDtypes, type Precision } from '../contracts/precision.js';
import type { ModelFacts } from '../contracts/profile.js';
import type { Scorer } from '../contracts/scorer.js';
import type { Tensor, TensorSpec } from '../contracts/tensor.js';
import type { Cell } from '../config/keys.js';
import { buildPreprocessor } from '../dataset/preprocess.js';
import { modelFactsOnce, modelPath, probeOnce, type SweepContext } from './context.js';
import { CellConfigError, EngineUnavailableError } from './errors.js';
import { checkFit, concreteSpec } from './fit.js';
import type { Profile } from '../contracts/profile.js';

/** Everything a cell needs once it is known to be runnable: the outcome of the plan phase. */
export interface CellPlan {
  cell: Cell;
  engine: Engine;
  /** Engine options parsed by the engine's own zod schema, defaults filled in. */
  options: Record<string, unknown>;
  facts: ModelFacts;
  modelPath: string;
  workDir: string;
  dataset: Dataset;
  preprocessor: Preprocessor;
  inputName: string;
  outputName: string;
  /** Input specs with symbolic dims resolved, as the harness feeds them. */
  inputs: TensorSpec[];
  batchSize: number;
  /** Whole batches per session (drop-last: compiled engines have a fixed batch). */
  batches: number;
  firstBatch: Tensor;
  scorers: Scorer[];
  precision: { model: Precision; requested: Precision };
}

function parseOptions(engine: Engine, cell: Cell): Record<string, unknown> {
  const parsed = engine.optionsSchema.safeParse(cell.engine.options);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `engines[${cell.engineLabel}].options.${i.path.join('.')}: ${i.message}`);
    throw new CellConfigError(`invalid options for engine ${engine.name}: ${issues.join('; ')}`);
  }
  return parsed.data;
}

/** The model's own precision always runs; anything else must be one the engine can be asked for. */
function resolvePrecision(engine: Engine, cell: Cell, facts: ModelFacts): CellPlan['precision'] {
  const model = precisionOfDtypes([...facts.outputs, ...facts.inputs].map((t) => t.dtype));
  const requested = cell.engine.precision ?? model;
  if (requested !== model && !engine.precisions.includes(requested)) {
    throw new CellConfigError(
      `engines[${cell.engineLabel}].precision: ${engine.name} cannot execute ${requested}; it supports ${[...new Set([model, ...engine.precisions])].join(', ')}. Remove precision (the model's own, ${model}) or pick one of those.`,
    );
  }
  return { model, requested };
}

/** The plan phase: validates the cell, probes the engine, analyses the model and checks the data fits it. */
export async function planCell(ctx: SweepContext, cell: Cell, profile: Profile): Promise<CellPlan> {
  const exp = ctx.loaded.experiment;
  if (!Number.isInteger(cell.batchSize) || cell.batchSize <= 0) {
    throw new CellConfigError(`batch_sizes: ${cell.batchSize} is not a valid batch size; use a positive integer such as 1, 8 or 32.`);
  }
  const engine = ctx.registry.engine(cell.engine.name);
  const options = parseOptions(engine, cell);
  const availability = await probeOnce(ctx, engine);
  if (!availability.available) {
    throw new EngineUnavailableError(`engine ${engine.name} is not available here: ${availability.reason}. Fix: ${availability.fix}`);
  }
  profile.engine.version = availability.version;
  if (!engine.devices.includes(cell.engine.device) && !availability.devices.includes(cell.engine.device)) {
    throw new EngineUnavailableError(`engine ${engine.name} has no device "${cell.engine.device}"; it offers ${availability.devices.join(', ')}.`);
  }
  ctx.onProgress?.({ kind: 'phase', phase: 'analyse' });
  const facts = await modelFactsOnce(ctx, cell.model);
  profile.model = facts;
  const precision = resolvePrecision(engine, cell, facts);
  if (ctx.dataset instanceof Error) throw ctx.dataset;
  const dataset = ctx.dataset;
  const inputName = cell.model.input ?? facts.inputs[0]?.name;
  const inputSpec = facts.inputs.find((i) => i.name === inputName);
  if (!inputName || !inputSpec) {
    throw new CellConfigError(`model "${cell.model.name}" has no input "${inputName}"; its inputs are ${facts.inputs.map((i) => i.name).join(', ')}.`);
  }
  const datasetInput = dataset.inputNames.includes(inputName) ? inputName : dataset.inputNames[0]!;
  const preprocessor = buildPreprocessor(cell.model.preprocess ?? exp.preprocess, datasetInput);
  const B = cell.batchSize;
  const batches = Math.floor(dataset.size / B);
  if (batches === 0) {
    throw new CellConfigError(`dataset ${dataset.name} has ${dataset.size} samples, fewer than batch size ${B}; use a smaller batch size or more data.`);
  }
  profile.dataset.samples = dataset.size;
  profile.workload.samples_per_session = batches * B;
  const firstBatch = preprocessor.apply(dataset.read(0, B));
  checkFit(firstBatch, inputSpec, B, preprocessor.describe());
  const scorers = exp.scorers.map((s) => ctx.registry.scorer(s));
  for (const s of scorers) {
    if (s.needsLabels && !dataset.hasLabels) {
      throw new CellConfigError(`scorer ${s.name} needs labels, but dataset ${dataset.name} has none; remove it from scorers or add labels.`);
    }
  }
  return {
    cell,
    engine,
    options,
    facts,
    modelPath: modelPath(ctx, cell.model),
    workDir: path.join(ctx.workRoot, cell.key),
    dataset,
    preprocessor,
    inputName,
    outputName: facts.outputs[0]?.name ?? 'output',
    inputs: facts.inputs.map((i) => concreteSpec(i, B, i.name === inputName ? firstBatch : undefined)),
    batchSize: B,
    batches,
    firstBatch,
    scorers,
    precision,
  };
}
