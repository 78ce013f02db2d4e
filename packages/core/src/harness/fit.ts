import type { Tensor, TensorSpec } from '../contracts/tensor.js';
import { DatasetError } from '../dataset/errors.js';

/**
 * Resolves symbolic dims: the batch axis (0 unless the feed says otherwise; null: none) becomes the batch size, any
 * other symbolic dim takes the fed tensor's size.
 */
export function concreteSpec(spec: TensorSpec, batchSize: number, sample?: Tensor, batchAxis: number | null = 0): TensorSpec {
  return {
    ...spec,
    shape: spec.shape.map((d, i) => (typeof d === 'number' && d > 0 ? d : i === batchAxis ? batchSize : (sample?.dims[i] ?? d))),
  };
}

/** What feeds the input, for a fit error: where the data came from and the config line that sets it. */
export interface FitSource {
  /** The dataset field (preprocessed or as stored), the constant or the zeros. */
  where: string;
  /** e.g. models[vad].inputs.state */
  configLine: string;
  batchAxis: number | null;
  fromDataset: boolean;
}

/** The axis of `want` whose symbol is the same as axis 0's, where axis 0 is fixed: a state [2, batch, 128]. */
function likelyBatchAxis(x: Tensor, spec: TensorSpec, batchSize: number): number | null {
  if (x.dims.length !== spec.shape.length) return null;
  // The data came stacked on axis 0; the model wants the batch elsewhere when moving it there fits.
  for (let axis = 1; axis < spec.shape.length; axis++) {
    const moved = [...x.dims.slice(1, axis + 1), x.dims[0]!, ...x.dims.slice(axis + 1)];
    const want = concreteSpec(spec, batchSize, undefined, axis).shape;
    if (want.every((d, i) => typeof d !== 'number' || d === moved[i])) return axis;
  }
  return null;
}

/**
 * Checks one input's first batch against the model input and says what to change when it does not fit, naming the
 * model (`who`), the input, the shape it takes here and the config line that fixes it.
 */
export function checkFit(x: Tensor, spec: TensorSpec, batchSize: number, who: string, source: FitSource): void {
  const want = concreteSpec(spec, batchSize, x, source.batchAxis).shape;
  const { where, configLine } = source;
  if (x.dtype !== spec.dtype) {
    const fix = source.fromDataset
      ? `add {dtype: ${spec.dtype}} to preprocess (preprocessed input) or store the data as ${spec.dtype}`
      : `set dtype: ${spec.dtype} in ${configLine}`;
    throw new DatasetError(`${where} has dtype ${x.dtype} but ${who} input "${spec.name}" takes ${spec.dtype}; ${fix}.`);
  }
  const fits = x.dims.length === want.length && want.every((d, i) => typeof d !== 'number' || d === x.dims[i]);
  if (fits) return;
  const axis = source.fromDataset && source.batchAxis === 0 ? likelyBatchAxis(x, spec, batchSize) : null;
  const hint =
    axis !== null
      ? ` Its samples lie on axis ${axis}: set ${configLine}: { field: ${where.match(/field "([^"]+)"/)?.[1] ?? 'FIELD'}, batch_axis: ${axis} }, or, for a recurrent state at its start, { zeros: true }.`
      : x.dims.length === 4 && want.length === 4 && x.dims[3] === want[1]
        ? ' The channels look last: add {layout: NCHW} to preprocess.'
        : !source.fromDataset
          ? ` Give ${configLine} the shape [${want.join(', ')}].`
          : x.dims.length === want.length
            ? ' Resize/crop the data or pick the matching model.'
            : ` The number of axes differs: check the dataset arrays against the model input, or feed it another way in ${configLine} ({ constant: VALUE, dtype: ${spec.dtype} } or { zeros: true }).`;
  // "here": the shape at this batch, on the batch axis the hint proposes where it proposes one.
  const here = axis !== null ? concreteSpec(spec, batchSize, undefined, axis).shape : want;
  throw new DatasetError(
    `${where} has shape [${x.dims.join(', ')}] but ${who} input "${spec.name}" takes [${spec.shape.map((d) => d ?? '?').join(', ')}] (here [${here.join(', ')}]).${hint}`,
  );
}
