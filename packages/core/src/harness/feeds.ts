import type { Dataset, RawBatch } from '../contracts/dataset.js';
import type { ModelFacts } from '../contracts/profile.js';
import type { Tensor, TensorMap, TensorSpec } from '../contracts/tensor.js';
import type { ModelConfig, PreprocessStep } from '../config/schema.js';
import { buildPreprocessor } from '../dataset/preprocess.js';
import { CellConfigError } from './errors.js';

/** Which dataset field feeds one model input, and whether the config's preprocess steps apply to it. */
export interface InputBinding {
  input: TensorSpec;
  field: string;
  preprocessed: boolean;
}

/** Turns a raw dataset batch into the feeds of every model input. */
export interface Feeder {
  bindings: InputBinding[];
  feed(raw: RawBatch): TensorMap;
  /** What the binding is, for fit errors: the preprocess steps of the preprocessed input. */
  preprocessSteps: string[];
}

function fieldFor(model: ModelConfig, spec: TensorSpec, facts: ModelFacts, dataset: Dataset): string {
  const fields = dataset.inputNames;
  const mapped = model.inputs?.[spec.name];
  if (mapped !== undefined) {
    if (!fields.includes(mapped)) {
      throw new CellConfigError(
        `models[${model.name}].inputs.${spec.name} maps input "${spec.name}" to dataset field "${mapped}", which dataset ${dataset.name} does not have; its fields are ${fields.join(', ')}.`,
      );
    }
    return mapped;
  }
  if (fields.includes(spec.name)) return spec.name;
  // One input, one field: the names need not match (an image folder's "image" feeding a model's "input").
  if (facts.inputs.length === 1 && fields.length === 1) return fields[0]!;
  throw new CellConfigError(
    `model "${model.name}" input "${spec.name}" (${spec.dtype} [${spec.shape.map((d) => d ?? '?').join(', ')}]) has no data: dataset ${dataset.name} has fields ${fields.join(', ')}. ` +
      `Name a dataset field "${spec.name}", or map it in the model entry: inputs: { ${spec.name}: FIELD }.`,
  );
}

/**
 * Binds every model input to a dataset field: the model entry's `inputs` mapping, else the field of the same name.
 * The config's preprocess steps apply to one input (`models[].input`, default the first); the others are fed as stored.
 */
export function bindInputs(model: ModelConfig, facts: ModelFacts, dataset: Dataset, steps: PreprocessStep[]): Feeder {
  const names = facts.inputs.map((i) => i.name);
  for (const key of Object.keys(model.inputs ?? {})) {
    if (!names.includes(key)) {
      throw new CellConfigError(`models[${model.name}].inputs names "${key}", which is not an input of the model; its inputs are ${names.join(', ')}.`);
    }
  }
  const primary = model.input ?? names[0];
  if (!primary || !names.includes(primary)) {
    throw new CellConfigError(`model "${model.name}" has no input "${primary}"; its inputs are ${names.join(', ')}.`);
  }
  const bindings = facts.inputs.map((input) => ({ input, field: fieldFor(model, input, facts, dataset), preprocessed: input.name === primary }));
  const preprocessed = bindings.find((b) => b.preprocessed)!;
  const preprocessor = buildPreprocessor(steps, preprocessed.field);
  const feed = (raw: RawBatch): TensorMap => {
    const feeds: TensorMap = {};
    for (const b of bindings) {
      const t: Tensor | undefined = b.preprocessed ? preprocessor.apply(raw) : raw.inputs[b.field];
      if (!t) throw new CellConfigError(`dataset ${dataset.name} field "${b.field}" holds images, which only the preprocessed input "${primary}" can take.`);
      feeds[b.input.name] = t;
    }
    return feeds;
  };
  return { bindings, feed, preprocessSteps: preprocessor.describe() };
}
