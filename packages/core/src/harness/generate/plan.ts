import path from 'node:path';
import { LM_IO } from '../../contracts/generation.js';
import type { Engine, EngineProcess } from '../../contracts/engine.js';
import type { ModelFacts, Profile } from '../../contracts/profile.js';
import type { TensorSpec } from '../../contracts/tensor.js';
import type { Cell } from '../../config/keys.js';
import type { GenerateConfig } from '../../config/schema.js';
import { isTextDataset, type TextDataset } from '../../dataset/text-dataset.js';
import { modelFactsOnce, modelPath, type SweepContext } from '../context.js';
import type { Deadline } from '../deadline.js';
import { CellConfigError } from '../errors.js';
import { planEngine, resolvePrecision, type CellPlan } from '../plan.js';
import { scenarioSettings } from '../scenarios/settings.js';

export interface GeneratePlan {
  cell: Cell;
  engine: Engine;
  options: Record<string, unknown>;
  facts: ModelFacts;
  modelPath: string;
  workDir: string;
  dataset: TextDataset;
  cfg: GenerateConfig;
  /** [layers, heads, capacity, head_dim] of one request's cache. */
  cacheShape: number[];
  scenario: 'single_stream' | 'server';
  /** Server: Poisson requests/s. */
  requestRate: number | null;
  concurrency: number;
  precision: CellPlan['precision'];
  process: EngineProcess;
}

function spec(specs: TensorSpec[], name: string, where: string, model: string): TensorSpec {
  const s = specs.find((t) => t.name === name);
  if (!s) {
    throw new CellConfigError(
      `model "${model}" has no ${where} "${name}" (its ${where}s are ${specs.map((t) => t.name).join(', ')}): the generate workload needs the key-value cache graph of contracts/generation.ts (input_ids, past_length, past_key, past_value -> logits, present_key, present_value), as python/generate_lm.py exports.`,
    );
  }
  return s;
}

/** The cache's shape from past_key: fixed numbers, the same as past_value's and the presents'. */
function cacheShapeOf(facts: ModelFacts, model: string): number[] {
  const key = spec(facts.inputs, LM_IO.pastKey, 'input', model);
  for (const [name, list, where] of [[LM_IO.inputIds, facts.inputs, 'input'], [LM_IO.pastLength, facts.inputs, 'input'], [LM_IO.pastValue, facts.inputs, 'input'], [LM_IO.logits, facts.outputs, 'output'], [LM_IO.presentKey, facts.outputs, 'output'], [LM_IO.presentValue, facts.outputs, 'output']] as const) {
    spec(list, name, where, model);
  }
  if (key.shape.length !== 4 || !key.shape.every((d): d is number => typeof d === 'number')) {
    throw new CellConfigError(`model "${model}" input past_key has shape [${key.shape.join(', ')}]; the generate workload needs a fixed-capacity cache [layers, heads, capacity, head_dim].`);
  }
  return key.shape;
}

/** The plan phase of a generate cell: engine, model contract, dataset, prompts that fit the cache, scenario. */
export async function planGenerate(ctx: SweepContext, cell: Cell, profile: Profile, deadline: Deadline): Promise<GeneratePlan> {
  const exp = ctx.loaded.experiment;
  const cfg = exp.generate!;
  if (cell.batchSize !== 1) {
    throw new CellConfigError(`batch_sizes: ${cell.batchSize}; the generate workload runs one request per call (its concurrency is generate.max_concurrency): set batch_sizes: [1].`);
  }
  const { engine, options, process } = await planEngine(ctx, cell, profile, deadline);
  const facts = await deadline.run(modelFactsOnce(ctx, cell.model));
  profile.model = facts;
  const cacheShape = cacheShapeOf(facts, cell.model.name);
  if (ctx.dataset instanceof Error) throw ctx.dataset;
  if (!isTextDataset(ctx.dataset)) {
    throw new CellConfigError(`dataset kind ${exp.dataset.kind}: the generate workload reads prompts; use dataset: {kind: text, prompts: FILE.jsonl, held_out: FILE.txt}.`);
  }
  const dataset = ctx.dataset;
  const capacity = cacheShape[2]!;
  dataset.prompts.forEach((p, i) => {
    if (p.length + cfg.max_new_tokens > capacity) {
      throw new CellConfigError(
        `prompt ${i} of ${dataset.name} has ${p.length} tokens; with generate.max_new_tokens ${cfg.max_new_tokens} it needs ${p.length + cfg.max_new_tokens} cache slots, but model "${cell.model.name}" holds ${capacity}. Lower max_new_tokens or shorten the prompt.`,
      );
    }
  });
  const settings = scenarioSettings(exp, cell);
  if (settings.kind !== 'single_stream' && settings.kind !== 'server') {
    throw new CellConfigError(`scenario ${settings.kind}: the generate workload runs single_stream (one request at a time) or server (Poisson arrivals, generate.max_concurrency in flight).`);
  }
  profile.dataset.samples = dataset.size;
  profile.workload.samples_per_session = dataset.size;
  return {
    cell,
    engine,
    options,
    process,
    facts,
    modelPath: modelPath(ctx, cell.model),
    workDir: path.join(ctx.workRoot, cell.key),
    dataset,
    cfg,
    cacheShape,
    scenario: settings.kind,
    requestRate: settings.kind === 'server' ? settings.targetQps : null,
    concurrency: settings.kind === 'server' ? cfg.max_concurrency : 1,
    precision: resolvePrecision(engine, cell, facts),
  };
}
