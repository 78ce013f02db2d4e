import path from 'node:path';
import type { Dataset, RawBatch } from '../contracts/dataset.js';
import type { Labels } from '../contracts/scorer.js';
import type { Tensor } from '../contracts/tensor.js';
import { DatasetError } from './errors.js';
import { readDatasetFile } from './read-file.js';
import { manifestHash } from './manifest.js';
import { parseNpy } from './npy.js';
import { sliceRows } from './tensor-slice.js';

export function labelsFromTensor(t: Tensor, file: string): Labels {
  if (t.dtype === 'int64' || t.dtype === 'int32' || t.dtype === 'uint8' || t.dtype === 'int8') {
    if (t.dims.length !== 1) throw new DatasetError(`${file}: class labels must be 1-D [samples], got shape [${t.dims.join(', ')}].`);
    return { classes: Int32Array.from(t.data as ArrayLike<number | bigint>, Number) };
  }
  if (t.dtype === 'float32' || t.dtype === 'float64') {
    const width = t.dims.slice(1).reduce((a, b) => a * b, 1);
    return { targets: Float32Array.from(t.data as ArrayLike<number>), width };
  }
  throw new DatasetError(`${file}: labels of dtype ${t.dtype} are not supported; use int64 classes or float32 targets.`);
}

export function sliceLabels(labels: Labels | undefined, start: number, count: number): Labels | undefined {
  if (!labels) return undefined;
  if (labels.classes) return { classes: labels.classes.subarray(start, start + count) };
  const w = labels.width ?? 1;
  return { targets: labels.targets!.subarray(start * w, (start + count) * w), width: w };
}

export function labelCount(labels: Labels): number {
  return labels.classes ? labels.classes.length : labels.targets!.length / (labels.width ?? 1);
}

async function readInto(file: string): Promise<Buffer> {
  return readDatasetFile(file, `dataset file ${file} cannot be read (missing?). Check the dataset paths in the config; they are relative to the config file.`);
}

export async function loadNpyDataset(opts: { name: string; inputs: Record<string, string>; labels?: string; limit?: number }): Promise<Dataset> {
  const tensors: Record<string, Tensor> = {};
  const manifest: { name: string; bytes: Uint8Array }[] = [];
  let size = -1;
  for (const [name, file] of Object.entries(opts.inputs)) {
    const buf = await readInto(file);
    const t = parseNpy(buf, file);
    if (t.dims.length < 1) throw new DatasetError(`${file}: a dataset array needs a samples axis first; got a scalar.`);
    if (size >= 0 && t.dims[0] !== size) {
      throw new DatasetError(`${file}: ${t.dims[0]} samples, but other inputs have ${size}. Every input array needs the same first axis.`);
    }
    size = t.dims[0]!;
    tensors[name] = t;
    manifest.push({ name: path.basename(file), bytes: buf });
  }
  let labels: Labels | undefined;
  if (opts.labels) {
    const buf = await readInto(opts.labels);
    labels = labelsFromTensor(parseNpy(buf, opts.labels), opts.labels);
    manifest.push({ name: path.basename(opts.labels), bytes: buf });
    if (labelCount(labels) !== size) {
      throw new DatasetError(`${opts.labels}: ${labelCount(labels)} labels for ${size} samples. The labels array needs one entry per sample.`);
    }
  }
  if (size <= 0) throw new DatasetError(`dataset ${opts.name} is empty (0 samples in ${Object.values(opts.inputs).join(', ')}). Point it at data with samples.`);
  const total = opts.limit ? Math.min(opts.limit, size) : size;
  return {
    name: opts.name,
    manifestSha256: manifestHash(manifest),
    size: total,
    inputNames: Object.keys(tensors),
    hasLabels: labels !== undefined,
    read(start: number, count: number): RawBatch {
      const inputs: Record<string, Tensor> = {};
      for (const [name, t] of Object.entries(tensors)) inputs[name] = sliceRows(t, start, count);
      return { inputs, labels: sliceLabels(labels, start, count), count };
    },
  };
}
