/**
 * `--calibration`: an .npy of preprocessed model inputs is passed through as it is; an experiment config (YAML/JSON)
 * is turned into one, from its dataset and the preprocessing of the models[] entry whose path is the model being
 * pruned (else the config's top-level preprocess), exactly as `pbh run` would feed that model.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadExperiment } from '../config/load.js';
import { buildPreprocessor, loadDataset } from '../dataset/index.js';
import { PruneUsageError } from './request.js';
import { npyBytes } from './npy-write.js';

/** Samples taken from a config's dataset when --calibration-samples is not given (OBC's paper uses 1,024 images). */
export const DEFAULT_CONFIG_SAMPLES = 1024;

export interface Calibration {
  /** The .npy the Python side reads. */
  file: string;
  /** How the metadata and messages name the source. */
  label: string;
}

export async function resolveCalibration(source: string, model: string, samples: number | null, scratch: string): Promise<Calibration> {
  if (/\.npy$/i.test(source)) {
    if (samples === null) return { file: source, label: source };
    throw new PruneUsageError(`--calibration-samples applies to a config's dataset; ${source} is an .npy: save the samples you want in it`);
  }
  if (!/\.(ya?ml|json)$/i.test(source)) {
    throw new PruneUsageError(`--calibration ${source}: give an .npy of preprocessed model inputs [count, ...] or an experiment config (.yaml, .yml, .json)`);
  }
  const loaded = await loadExperiment(source);
  const exp = loaded.experiment;
  const target = path.resolve(model);
  const entry = exp.models.find((m) => path.resolve(loaded.dir, m.path) === target);
  const dataset = await loadDataset(exp.dataset, loaded.dir);
  const count = Math.min(samples ?? DEFAULT_CONFIG_SAMPLES, dataset.size);
  if (samples !== null && samples > dataset.size) {
    throw new PruneUsageError(`--calibration-samples ${samples}: the dataset of ${source} has ${dataset.size} samples`);
  }
  const steps = entry?.preprocess ?? exp.preprocess;
  const inputName = entry?.input ?? dataset.inputNames[0] ?? 'input';
  const tensor = buildPreprocessor(steps, inputName).apply(dataset.read(0, count));
  if (tensor.dtype !== 'float32') {
    throw new PruneUsageError(`--calibration ${source}: its preprocessing gives ${tensor.dtype} inputs; pbh prune calibrates float32 models`);
  }
  const file = path.join(scratch, 'calibration.npy');
  await writeFile(file, npyBytes('<f4', tensor.dims, tensor.data as Float32Array));
  const how = entry ? `models[] entry ${entry.name}'s preprocessing` : 'the top-level preprocess (no models[] entry has this path)';
  return { file, label: `${source}: first ${count} samples of dataset ${dataset.name}, ${how}` };
}
