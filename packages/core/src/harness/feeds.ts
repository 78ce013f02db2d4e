import type { Dataset, RawBatch } from '../contracts/dataset.js';
import type { ModelFacts } from '../contracts/profile.js';
import { DTYPES, typedArray, type DType, type Tensor, type TensorMap, type TensorSpec } from '../contracts/tensor.js';
import type { InputFeed, ModelConfig, PreprocessStep } from '../config/schema.js';
import { buildPreprocessor } from '../dataset/preprocess.js';
import { CellConfigError } from './errors.js';
import { numberToHalf } from './half.js';

/** Where one model input's values come from. */
export type FeedSource =
  | { kind: 'field'; field: string }
  | { kind: 'constant'; tensor: Tensor }
  | { kind: 'zeros'; dtype: DType; shape: (number | 'batch')[] };

/** What feeds one model input, and on which axis its batch's samples lie. */
export interface InputBinding {
  input: TensorSpec;
  source: FeedSource;
  /** The dataset field (field sources), else ''. */
  field: string;
  /** Whether the config's preprocess steps apply to it (the one preprocessed input). */
  preprocessed: boolean;
  /** The axis that holds the samples; null for an input fed whole every query (a constant, a fixed-shape state). */
  batchAxis: number | null;
  /** The config line that set this feed, or the default it follows, for error messages. */
  configLine: string;
}

/** Turns a raw dataset batch into the feeds of every model input. */
export interface Feeder {
  bindings: InputBinding[];
  feed(raw: RawBatch): TensorMap;
  /** Input name -> the axis its samples lie on (null: fed whole), for padding a short last batch. */
  batchAxes: Record<string, number | null>;
  /** What the binding is, for fit errors: the preprocess steps of the preprocessed input. */
  preprocessSteps: string[];
}

const shapeText = (shape: TensorSpec['shape']): string => `[${shape.map((d) => d ?? '?').join(', ')}]`;

/** The symbol (dim_param) the batch carries: axis 0 of the primary input, when it is named. */
function batchSymbol(primary: TensorSpec): string | null {
  const d = primary.shape[0];
  return typeof d === 'string' && d !== '' ? d : null;
}

/**
 * The axis that holds the samples: the config's batch_axis, else the axis whose symbol is the primary input's batch
 * symbol when axis 0 is fixed (a recurrent state [2, batch, 128]), else 0; null when the model fixes every axis and
 * the config names none (the input is fed whole).
 */
function defaultBatchAxis(spec: TensorSpec, primary: TensorSpec, given: number | undefined, fedWholeWhenFixed: boolean): number | null {
  if (given !== undefined) {
    if (given >= Math.max(spec.shape.length, 1)) {
      throw new CellConfigError(`batch_axis ${given} is out of range for input "${spec.name}" ${shapeText(spec.shape)} (rank ${spec.shape.length}).`);
    }
    return given;
  }
  const fixed = (d: TensorSpec['shape'][number] | undefined): boolean => typeof d === 'number' && d > 0;
  if (spec.shape.length === 0) return null;
  const symbol = batchSymbol(primary);
  if (fixed(spec.shape[0]) && symbol !== null) {
    const axis = spec.shape.indexOf(symbol);
    if (axis > 0) return axis;
  }
  if (fedWholeWhenFixed && spec.shape.every(fixed)) return null;
  return 0;
}

type NumberTree = number | NumberTree[];

/** A constant's dims and values, checked to be rectangular. */
function flattenTree(value: NumberTree, where: string): { dims: number[]; values: number[] } {
  if (typeof value === 'number') return { dims: [], values: [value] };
  if (value.length === 0) throw new CellConfigError(`${where}: an empty array has no shape PBH can feed; give the values.`);
  const parts = value.map((v) => flattenTree(v, where));
  const inner = parts[0]!.dims;
  if (!parts.every((p) => p.dims.length === inner.length && p.dims.every((d, i) => d === inner[i]))) {
    throw new CellConfigError(`${where}: the nested arrays are not rectangular; every row needs the same shape.`);
  }
  return { dims: [value.length, ...inner], values: parts.flatMap((p) => p.values) };
}

function constantTensor(value: NumberTree, dtype: DType, where: string): Tensor {
  const { dims, values } = flattenTree(value, where);
  const data = typedArray(dtype, values.length);
  values.forEach((v, i) => {
    if (dtype === 'int64') {
      if (!Number.isInteger(v)) throw new CellConfigError(`${where}: ${v} is not an integer, and the dtype is int64.`);
      (data as BigInt64Array)[i] = BigInt(v);
    } else if (dtype === 'float16') {
      (data as Uint16Array)[i] = numberToHalf(v);
    } else {
      (data as Float32Array)[i] = v;
    }
  });
  return { dtype, dims, data };
}

/** The zeros' shape: the config's, else the model's with the batch axis marked; an axis left open is an error. */
function zerosShape(spec: TensorSpec, batchAxis: number | null, given: (number | 'batch')[] | undefined, where: string): (number | 'batch')[] {
  if (given) {
    if (given.length !== spec.shape.length) {
      throw new CellConfigError(`${where}.shape has ${given.length} axes, but input "${spec.name}" ${shapeText(spec.shape)} has ${spec.shape.length}.`);
    }
    return given;
  }
  return spec.shape.map((d, axis) => {
    if (axis === batchAxis) return 'batch';
    if (typeof d === 'number' && d > 0) return d;
    throw new CellConfigError(
      `${where}: input "${spec.name}" ${shapeText(spec.shape)} leaves axis ${axis} open; give its size: ${where}: { zeros: true, shape: [${spec.shape.map((x, i) => (i === batchAxis ? "'batch'" : typeof x === 'number' && x > 0 ? x : 'N')).join(', ')}] }.`,
    );
  });
}

/** One sample's zeros above this are refused before anything is allocated: a typed array holds at most ~4 GiB here. */
const MAX_ZEROS_BYTES = 1 << 30;

function checkZerosSize(spec: TensorSpec, shape: (number | 'batch')[], where: string): void {
  const bytes = shape.reduce<number>((a, d) => a * (d === 'batch' ? 1 : d), DTYPES[spec.dtype].bytes);
  if (bytes > MAX_ZEROS_BYTES) {
    throw new CellConfigError(
      `${where}: zeros of [${shape.join(', ')}] ${spec.dtype} for input "${spec.name}" are ${(bytes / 2 ** 30).toFixed(1)} GiB a sample, above the ${MAX_ZEROS_BYTES / 2 ** 30} GiB PBH allocates for one: give the input's real size in ${where}.shape.`,
    );
  }
}

/** A batch of `rows` samples stacked on axis 0 (as datasets hold them), moved to `axis`. */
function moveBatchAxis(t: Tensor, axis: number): Tensor {
  if (axis === 0) return t;
  const rows = t.dims[0]!;
  const sample = t.dims.slice(1);
  if (axis > sample.length) {
    throw new CellConfigError(`batch axis ${axis} is out of range for samples of shape [${sample.join(', ')}].`);
  }
  const outer = sample.slice(0, axis).reduce((a, d) => a * d, 1);
  const inner = sample.slice(axis).reduce((a, d) => a * d, 1);
  const data = typedArray(t.dtype, t.data.length) as Float32Array;
  const src = t.data as Float32Array;
  for (let o = 0; o < outer; o++) {
    for (let r = 0; r < rows; r++) data.set(src.subarray((r * outer + o) * inner, (r * outer + o + 1) * inner), (o * rows + r) * inner);
  }
  return { dtype: t.dtype, dims: [...sample.slice(0, axis), rows, ...sample.slice(axis)], data: data as Tensor['data'] };
}

function bindOne(model: ModelConfig, spec: TensorSpec, primary: TensorSpec, facts: ModelFacts, dataset: Dataset): Omit<InputBinding, 'preprocessed'> {
  const fields = dataset.inputNames;
  const mapped: InputFeed | undefined = model.inputs?.[spec.name];
  const line = `models[${model.name}].inputs.${spec.name}`;
  if (mapped !== undefined && typeof mapped === 'object' && 'constant' in mapped) {
    const tensor = constantTensor(mapped.constant, mapped.dtype, line);
    return { input: spec, source: { kind: 'constant', tensor }, field: '', batchAxis: null, configLine: line };
  }
  if (mapped !== undefined && typeof mapped === 'object' && 'zeros' in mapped) {
    const batchAxis = defaultBatchAxis(spec, primary, mapped.batch_axis, true);
    const shape = zerosShape(spec, batchAxis, mapped.shape, line);
    checkZerosSize(spec, shape, line);
    const axis = shape.indexOf('batch');
    return { input: spec, source: { kind: 'zeros', dtype: spec.dtype, shape }, field: '', batchAxis: axis >= 0 ? axis : null, configLine: line };
  }
  const field = typeof mapped === 'string' ? mapped : mapped?.field;
  if (field !== undefined) {
    if (!fields.includes(field)) {
      throw new CellConfigError(
        `${line} maps input "${spec.name}" to dataset field "${field}", which dataset ${dataset.name} does not have; its fields are ${fields.join(', ')}.`,
      );
    }
    const given = typeof mapped === 'object' ? mapped.batch_axis : undefined;
    return { input: spec, source: { kind: 'field', field }, field, batchAxis: defaultBatchAxis(spec, primary, given, false), configLine: line };
  }
  const fed = (f: string): Omit<InputBinding, 'preprocessed'> => ({
    input: spec,
    source: { kind: 'field', field: f },
    field: f,
    batchAxis: defaultBatchAxis(spec, primary, undefined, false),
    configLine: `${line} (unset: the field of the same name)`,
  });
  if (fields.includes(spec.name)) return fed(spec.name);
  // One input, one field: the names need not match (an image folder's "image" feeding a model's "input").
  if (facts.inputs.length === 1 && fields.length === 1) return fed(fields[0]!);
  const zeros = spec.shape.map((d) => (typeof d === 'number' && d > 0 ? d : "'batch'")).join(', ');
  throw new CellConfigError(
    `model "${model.name}" input "${spec.name}" (${spec.dtype} ${shapeText(spec.shape)}) has no data: dataset ${dataset.name} has fields ${fields.join(', ')}. ` +
      `Feed it in the model entry: ${line}: FIELD (a dataset field), { constant: VALUE, dtype: ${spec.dtype} } (the same every query) or { zeros: true } (zeros of [${zeros}], e.g. a recurrent state at its start).`,
  );
}

/**
 * Binds every model input to what feeds it: the model entry's `inputs` (a dataset field, a constant, zeros), else the
 * field of the same name. The config's preprocess steps apply to one input (`models[].input`, default the first);
 * other fields are fed as stored. A field's samples are stacked on the input's batch axis.
 */
export function bindInputs(model: ModelConfig, facts: ModelFacts, dataset: Dataset, steps: PreprocessStep[]): Feeder {
  const names = facts.inputs.map((i) => i.name);
  for (const key of Object.keys(model.inputs ?? {})) {
    if (!names.includes(key)) {
      throw new CellConfigError(`models[${model.name}].inputs names "${key}", which is not an input of the model; its inputs are ${names.join(', ')}.`);
    }
  }
  const fromData = facts.inputs.filter((i) => {
    const m = model.inputs?.[i.name];
    return !(typeof m === 'object' && ('constant' in m || 'zeros' in m));
  });
  const primary = model.input ?? fromData[0]?.name ?? names[0];
  if (!primary || !names.includes(primary)) {
    throw new CellConfigError(`model "${model.name}" has no input "${primary}"; its inputs are ${names.join(', ')}.`);
  }
  const primarySpec = facts.inputs.find((i) => i.name === primary)!;
  const bindings: InputBinding[] = facts.inputs.map((input) => {
    const b = bindOne(model, input, primarySpec, facts, dataset);
    return { ...b, preprocessed: input.name === primary && b.source.kind === 'field' };
  });
  const preprocessed = bindings.find((b) => b.preprocessed);
  if (!preprocessed && steps.length > 0) {
    throw new CellConfigError(`model "${model.name}": preprocess applies to input "${primary}", which is not fed from the dataset; point models[${model.name}].input at a dataset-fed input or drop preprocess.`);
  }
  const preprocessor = preprocessed ? buildPreprocessor(steps, preprocessed.field) : null;
  const zerosCache = new Map<string, Tensor>();
  const zerosFor = (b: InputBinding, source: { dtype: DType; shape: (number | 'batch')[] }, rows: number): Tensor => {
    const key = `${b.input.name}\0${rows}`;
    let t = zerosCache.get(key);
    if (!t) {
      const dims = source.shape.map((d) => (d === 'batch' ? rows : d));
      t = { dtype: source.dtype, dims, data: typedArray(source.dtype, dims.reduce((a, d) => a * d, 1)) };
      zerosCache.set(key, t);
    }
    return t;
  };
  const feed = (raw: RawBatch): TensorMap => {
    const feeds: TensorMap = {};
    for (const b of bindings) {
      const s = b.source;
      if (s.kind === 'constant') {
        feeds[b.input.name] = s.tensor;
        continue;
      }
      if (s.kind === 'zeros') {
        feeds[b.input.name] = zerosFor(b, s, raw.count);
        continue;
      }
      const t: Tensor | undefined = b.preprocessed ? preprocessor!.apply(raw) : raw.inputs[s.field];
      if (!t) throw new CellConfigError(`dataset ${dataset.name} field "${s.field}" holds images, which only the preprocessed input "${primary}" can take.`);
      feeds[b.input.name] = b.batchAxis === null ? t : moveBatchAxis(t, b.batchAxis);
    }
    return feeds;
  };
  const batchAxes = Object.fromEntries(bindings.map((b) => [b.input.name, b.batchAxis]));
  return { bindings, feed, batchAxes, preprocessSteps: preprocessor?.describe() ?? [] };
}

/** How a binding feeds its input, in a few words (errors, `pbh inspect --config`). */
export function describeSource(b: InputBinding, datasetName: string, steps: string[]): string {
  const s = b.source;
  if (s.kind === 'constant') return `the constant ${s.tensor.dtype} [${s.tensor.dims.join(', ')}] of ${b.configLine}`;
  if (s.kind === 'zeros') return `zeros [${s.shape.join(', ')}] (${b.configLine})`;
  const axis = b.batchAxis !== null && b.batchAxis !== 0 ? `, samples on axis ${b.batchAxis}` : '';
  return b.preprocessed
    ? `dataset ${datasetName} field "${s.field}" after preprocess (${steps.join(', ') || 'none'})${axis}`
    : `dataset ${datasetName} field "${s.field}" (fed as stored${axis})`;
}
