import path from 'node:path';
import type { Dataset } from '../contracts/dataset.js';
import type { DatasetConfig } from '../config/schema.js';
import { loadCsvDataset } from './csv-dataset.js';
import { loadImageFolder } from './image-folder.js';
import { loadNpyDataset } from './npy-dataset.js';
import { loadTextDataset } from './text-dataset.js';

/** Loads the configured dataset; relative paths resolve against `baseDir` (the config file's folder). */
export async function loadDataset(cfg: DatasetConfig, baseDir: string): Promise<Dataset> {
  const at = (p: string): string => path.resolve(baseDir, p);
  switch (cfg.kind) {
    case 'image-folder':
      return loadImageFolder({ name: cfg.name ?? path.basename(cfg.root), root: at(cfg.root), labels: cfg.labels, limit: cfg.limit });
    case 'npy':
      return loadNpyDataset({
        name: cfg.name ?? path.basename(Object.values(cfg.inputs)[0] ?? 'npy', '.npy'),
        inputs: Object.fromEntries(Object.entries(cfg.inputs).map(([k, v]) => [k, at(v)])),
        labels: cfg.labels ? at(cfg.labels) : undefined,
        limit: cfg.limit,
      });
    case 'csv':
      return loadCsvDataset({
        name: cfg.name ?? path.basename(cfg.path, '.csv'),
        file: at(cfg.path),
        labelColumn: cfg.label_column,
        featureColumns: cfg.feature_columns,
        limit: cfg.limit,
      });
    case 'text':
      return loadTextDataset({
        name: cfg.name ?? (cfg.prompts ? path.basename(cfg.prompts).replace(/\.(jsonl|json)$/, '') : `random-${cfg.random!.input_len}`),
        prompts: cfg.prompts ? at(cfg.prompts) : undefined,
        random: cfg.random ? { count: cfg.random.num_prompts, inputLen: cfg.random.input_len, rangeRatio: cfg.random.range_ratio, seed: cfg.random.seed } : undefined,
        heldOut: cfg.held_out ? at(cfg.held_out) : undefined,
        limit: cfg.limit,
      });
  }
}
