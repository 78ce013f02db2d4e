import type { TensorMap } from './tensor.js';

/** Ground truth for one batch: class ids or regression targets, one row per sample. */
export interface Labels {
  /** Integer class per sample (classification) */
  classes?: Int32Array;
  /** Regression targets, row-major [samples, width]. */
  targets?: Float32Array;
  width?: number;
}

/** Scorers keep per-batch sufficient statistics so reduce() can be exact. */
export type BatchScore = Record<string, number>;

export interface ScoreResult {
  /** Name shown in Profiles, e.g. "top1", "top5", "mse". */
  metric: string;
  value: number;
  samples: number;
  /** True when higher is better (accuracy) and false when lower is (error). */
  higherIsBetter: boolean;
}

export interface ScoreContext {
  /** Reference outputs for the same batch from the reference engine, when a scorer needs them. */
  reference?: TensorMap;
  outputName: string;
}

export interface Scorer {
  name: string;
  description: string;
  needsLabels: boolean;
  needsReference: boolean;
  score(outputs: TensorMap, labels: Labels | undefined, ctx: ScoreContext): BatchScore;
  reduce(batches: BatchScore[]): ScoreResult[];
}
