import { createHash } from 'node:crypto';
import { canonicalJson } from '../encoding/canonical-json.js';
import type { EngineEntry, Experiment, ModelConfig } from './schema.js';

/** One (model x engine x device x batch size) point of a sweep. */
export interface Cell {
  key: string;
  model: ModelConfig;
  engine: EngineEntry;
  engineLabel: string;
  batchSize: number;
}

/**
 * The key covers everything that changes what a cell measures (experiment name, model, engine and options,
 * device, precision, scenario, batch, workload, dataset and preprocessing), so --resume skips only truly identical cells.
 */
export function cellKey(exp: Experiment, model: ModelConfig, engine: EngineEntry, batchSize: number): string {
  const material = canonicalJson({
    experiment: exp.name,
    model: { name: model.name, path: model.path, preprocess: model.preprocess ?? null, input: model.input ?? null },
    engine: { name: engine.name, label: engine.label ?? null, device: engine.device, options: engine.options, precision: engine.precision ?? 'model', ...(engine.process ? { process: engine.process } : {}) },
    scenario: { of: engine.scenario ?? exp.scenario, mlperf: exp.mlperf_rules },
    batchSize,
    // Only generate cells carry the block, so every other cell keeps the key it had before generate existed.
    workload: { warmup: exp.warmup_batches, sessions: exp.sessions, seed: exp.seed, ...(exp.generate ? { generate: exp.generate } : {}) },
    dataset: exp.dataset,
    preprocess: exp.preprocess,
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 16);
}

/**
 * Everything else of the config that changes a cell's result (its model entry in full: inputs, weights, optimization;
 * scorers, tolerance, performance_samples, metrics, layer profile, energy, ...). It is stored in the Profile and
 * compared by --resume, not part of the key, so the keys (and the history that groups by them) stay what they were.
 */
export function cellFingerprint(exp: Experiment, cell: Cell): string {
  // What only names, selects or bounds cells is left out: a new description or timeout reruns nothing.
  const { name: _name, description: _description, models: _models, engines: _engines, batch_sizes: _batches, exclude: _exclude, timeout_s: _timeout, plugins: _plugins, ...rest } = exp;
  const material = canonicalJson({ experiment: rest, model: cell.model, engine: cell.engine, batchSize: cell.batchSize });
  return createHash('sha256').update(material).digest('hex').slice(0, 16);
}

function exclusionOf(exp: Experiment, model: ModelConfig, engine: EngineEntry, batchSize: number): Experiment['exclude'][number] | undefined {
  return exp.exclude.find(
    (x) =>
      (x.model === undefined || x.model === model.name) &&
      (x.engine === undefined || x.engine === (engine.label ?? engine.name)) &&
      (x.batch_size === undefined || x.batch_size === batchSize),
  );
}

const excluded = (exp: Experiment, model: ModelConfig, engine: EngineEntry, batchSize: number): boolean => exclusionOf(exp, model, engine, batchSize) !== undefined;

/** A cell the config's `exclude:` leaves out, with the first matching entry's reason (null where it gives none). */
export interface ExcludedCell {
  model: string;
  /** The engine entry: its label where it has one, else the engine's name. */
  engine: string;
  engineName: string;
  batchSize: number;
  reason: string | null;
}

/** Every cell `exclude:` drops, so what was not measured can be said rather than left out silently. */
export function excludedCells(exp: Experiment): ExcludedCell[] {
  const out: ExcludedCell[] = [];
  for (const model of exp.models) {
    for (const engine of exp.engines) {
      for (const batchSize of batchSizesOf(exp, engine)) {
        const x = exclusionOf(exp, model, engine, batchSize);
        if (x) out.push({ model: model.name, engine: engine.label ?? engine.name, engineName: engine.name, batchSize, reason: x.reason ?? null });
      }
    }
  }
  return out;
}

/** Two entries that give one cell would measure the same thing twice under one key: a config error. */
export class DuplicateCellError extends Error {
  override name = 'DuplicateCellError';
}

/** The batch sizes an engine entry runs: a multi_stream query is samples_per_query samples run as one batch. */
function batchSizesOf(exp: Experiment, engine: EngineEntry): number[] {
  const scenario = engine.scenario ?? exp.scenario;
  if (scenario === 'multi_stream') return [8];
  if (typeof scenario === 'object' && scenario.kind === 'multi_stream') return [scenario.samples_per_query ?? 8];
  return exp.batch_sizes;
}

export function expandCells(exp: Experiment): Cell[] {
  const seen = new Map<string, string>();
  const cells: Cell[] = [];
  for (const model of exp.models) {
    for (const engine of exp.engines) {
      for (const batchSize of batchSizesOf(exp, engine)) {
        if (excluded(exp, model, engine, batchSize)) continue;
        const key = cellKey(exp, model, engine, batchSize);
        const where = `models[${model.name}] x engines[${exp.engines.indexOf(engine)}] (${engine.label ?? engine.name}) x batch ${batchSize}`;
        const twin = seen.get(key);
        if (twin) {
          throw new DuplicateCellError(
            `${where} is the same cell as ${twin}: the entries agree in name, label, device, options and precision. Remove one, or give them different labels to measure both.`,
          );
        }
        seen.set(key, where);
        cells.push({
          key,
          model,
          engine,
          engineLabel: engine.label ?? engine.name,
          batchSize,
        });
      }
    }
  }
  return cells;
}
