import { createHash } from 'node:crypto';
import type { EngineEntry, Experiment, ModelConfig } from './schema.js';

/** One (model x engine x device x batch size) point of a sweep. */
export interface Cell {
  key: string;
  model: ModelConfig;
  engine: EngineEntry;
  engineLabel: string;
  batchSize: number;
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The key covers everything that changes what a cell measures (experiment name, model, engine and options,
 * device, batch, workload, dataset and preprocessing), so --resume skips only truly identical cells.
 */
export function cellKey(exp: Experiment, model: ModelConfig, engine: EngineEntry, batchSize: number): string {
  const material = stableJson({
    experiment: exp.name,
    model: { name: model.name, path: model.path, preprocess: model.preprocess ?? null, input: model.input ?? null },
    engine: { name: engine.name, device: engine.device, options: engine.options },
    batchSize,
    workload: { warmup: exp.warmup_batches, sessions: exp.sessions, seed: exp.seed },
    dataset: exp.dataset,
    preprocess: exp.preprocess,
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 16);
}

function excluded(exp: Experiment, model: ModelConfig, engine: EngineEntry, batchSize: number): boolean {
  return exp.exclude.some(
    (x) =>
      (x.model === undefined || x.model === model.name) &&
      (x.engine === undefined || x.engine === (engine.label ?? engine.name)) &&
      (x.batch_size === undefined || x.batch_size === batchSize),
  );
}

export function expandCells(exp: Experiment): Cell[] {
  const cells: Cell[] = [];
  for (const model of exp.models) {
    for (const engine of exp.engines) {
      for (const batchSize of exp.batch_sizes) {
        if (excluded(exp, model, engine, batchSize)) continue;
        cells.push({
          key: cellKey(exp, model, engine, batchSize),
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
