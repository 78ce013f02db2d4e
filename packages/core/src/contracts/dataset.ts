import type { Labels } from './scorer.js';
import type { Tensor, TensorMap } from './tensor.js';

/** One decoded image, HWC, values as stored (0..255 for 8-bit files). Images in a folder may differ in size. */
export interface Image {
  data: Float32Array;
  height: number;
  width: number;
  channels: number;
}

/** A slice of a dataset before preprocessing: tensors with samples on axis 0, or decoded images. */
export interface RawBatch {
  inputs: TensorMap;
  images?: Image[];
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
  /** Samples [start, start+count) as one raw batch; data is resident, so this is cheap and synchronous. */
  read(start: number, count: number): RawBatch;
}

/** Turns a raw batch into the model's input tensor; built from the config's preprocess steps. */
export interface Preprocessor {
  describe(): string[];
  apply(batch: RawBatch): Tensor;
}
