import type { Labels } from './scorer.js';
import type { TensorMap } from './tensor.js';

/** A decoded sample source; preprocessors turn raw samples into model-ready batches. */
export interface RawBatch {
  /** One entry per dataset input; images are HWC uint8/float32 per sample before preprocessing. */
  inputs: TensorMap;
  labels?: Labels;
  count: number;
}

export interface Dataset {
  name: string;
  /** sha256 of the manifest (file names, sizes and hashes, labels) for reproducibility. */
  manifestSha256: string;
  size: number;
  inputNames: string[];
  hasLabels: boolean;
  /** Samples [start, start+count) as one raw batch. */
  read(start: number, count: number): Promise<RawBatch>;
}

export interface Preprocessor {
  name: string;
  apply(batch: RawBatch): RawBatch;
}
