import path from 'node:path';
import type { Engine, EngineProcess } from '../../contracts/engine.js';
import type { ModelFacts, Profile } from '../../contracts/profile.js';
import type { Cell } from '../../config/keys.js';
import type { GenerateConfig } from '../../config/schema.js';
import { isTextDataset, type TextDataset } from '../../dataset/text-dataset.js';
import { modelFactsOnce, modelPath, type SweepContext } from '../context.js';
import type { Deadline } from '../deadline.js';
import { CellConfigError } from '../errors.js';
import { planEngine, resolvePrecision, type CellPlan } from '../plan.js';
import { scenarioSettings } from '../scenarios/settings.js';
import { lmModelOf, type LmModel } from './lm-model.js';
import { byteTokens, modelTokens, tokenizerFileOf, type Tokenized } from './tokens.js';

/** Tokenized prompts per tokenizer, dataset and window, once per sweep (every engine of a model is fed the same ids). */
const tokenCache = new WeakMap<SweepContext, Map<string, Promise<Tokenized>>>();

function tokensOnce(ctx: SweepContext, tokenizer: string | null, dataset: TextDataset, window: number): Promise<Tokenized> {
  const cache = tokenCache.get(ctx) ?? new Map<string, Promise<Tokenized>>();
  tokenCache.set(ctx, cache);
  const key = `${tokenizer ?? 'bytes'}\0${dataset.manifestSha256}\0${window}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = tokenizer === null ? Promise.resolve(byteTokens(dataset, window)) : modelTokens(tokenizer, dataset, window);
    hit.catch(() => cache.delete(key));
    cache.set(key, hit);
  }
  return hit;
}

export interface GeneratePlan {
  cell: Cell;
  engine: Engine;
  options: Record<string, unknown>;
  facts: ModelFacts;
  modelPath: string;
  workDir: string;
  dataset: TextDataset;
  cfg: GenerateConfig;
  /** The model's cache: PBH's fixed-capacity graph, or the Hugging Face decoder layout. */
  lm: LmModel;
  /** The ids every engine of this model is fed, from the model's own tokenizer (bytes for PBH's byte LM). */
  tokens: Tokenized;
  /** Tokens per perplexity window, each scored from an empty cache. */
  window: number;
  scenario: 'single_stream' | 'server';
  /** Server: Poisson requests/s. */
  requestRate: number | null;
  concurrency: number;
  precision: CellPlan['precision'];
  process: EngineProcess;
}

/** An engine entry's own max_concurrency (a concurrency sweep is one entry per value), if its scenario names one. */
function entryConcurrency(scenario: Cell['engine']['scenario']): number | undefined {
  return typeof scenario === 'object' && scenario !== null && 'max_concurrency' in scenario ? scenario.max_concurrency : undefined;
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
  const files = [path.resolve(ctx.loaded.dir, cell.model.path), modelPath(ctx, cell.model)];
  const lm = lmModelOf(facts, files, cell.model.name);
  if (ctx.dataset instanceof Error) throw ctx.dataset;
  if (!isTextDataset(ctx.dataset)) {
    throw new CellConfigError(`dataset kind ${exp.dataset.kind}: the generate workload reads prompts; use dataset: {kind: text, prompts: FILE.jsonl, held_out: FILE.txt}.`);
  }
  const dataset = ctx.dataset;
  const tokenizer = tokenizerFileOf(files);
  if (tokenizer === null && lm.layout === 'hf_decoder') {
    throw new CellConfigError(`model "${cell.model.name}" has no tokenizer.json in its folder or beside its file (${files[0]}): PBH feeds every engine ids from the model's own tokenizer. Put the tokenizer files (tokenizer.json, tokenizer_config.json) there, as save_pretrained and optimum-cli export write them.`);
  }
  const window = lm.layout === 'pbh_cache' ? lm.capacity : Math.min(lm.capacity ?? 512, 512);
  const tokens = await deadline.run(tokensOnce(ctx, tokenizer, dataset, window));
  const capacity = lm.capacity;
  tokens.prompts.forEach((p, i) => {
    if (p.length === 0) throw new CellConfigError(`prompt ${i} of ${dataset.name} is empty after tokenizing with ${tokenizer ?? 'bytes'}; remove it or give it text.`);
    if (capacity !== null && p.length + cfg.max_new_tokens > capacity) {
      throw new CellConfigError(
        `prompt ${i} of ${dataset.name} has ${p.length} tokens; with generate.max_new_tokens ${cfg.max_new_tokens} it needs ${p.length + cfg.max_new_tokens} positions, but model "${cell.model.name}" holds ${capacity}. Lower max_new_tokens or shorten the prompt.`,
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
    lm,
    tokens,
    window,
    scenario: settings.kind,
    requestRate: settings.kind === 'server' ? settings.targetQps : null,
    concurrency: settings.kind === 'server' ? (entryConcurrency(cell.engine.scenario) ?? cfg.max_concurrency) : 1,
    precision: resolvePrecision(engine, cell, facts),
  };
}
