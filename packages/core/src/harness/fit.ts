import type { Tensor, TensorSpec } from '../contracts/tensor.js';
import { DatasetError } from '../dataset/errors.js';

/** Resolves symbolic dims: axis 0 becomes the batch size, any other symbolic dim takes the data's size. */
export function concreteSpec(spec: TensorSpec, batchSize: number, sample?: Tensor): TensorSpec {
  return {
    ...spec,
    shape: spec.shape.map((d, i) => (typeof d === 'number' && d > 0 ? d : i === 0 ? batchSize : (sample?.dims[i] ?? d))),
  };
}

/**
 * Checks one input's first batch against the model input and says what to change when it does not fit, naming the
 * model (`who`), the input, and where the data came from (`where`: the dataset field, preprocessed or as stored).
 */
export function checkFit(x: Tensor, spec: TensorSpec, batchSize: number, who: string, where: string): void {
  const want = concreteSpec(spec, batchSize, x).shape;
  if (x.dtype !== spec.dtype) {
    throw new DatasetError(
      `${where} has dtype ${x.dtype} but ${who} input "${spec.name}" takes ${spec.dtype}; add {dtype: ${spec.dtype}} to preprocess (preprocessed input) or store the data as ${spec.dtype}.`,
    );
  }
  const fits = x.dims.length === want.length && want.every((d, i) => typeof d !== 'number' || d === x.dims[i]);
  if (!fits) {
    const hint =
      x.dims.length === 4 && want.length === 4 && x.dims[3] === want[1]
        ? ' The channels look last: add {layout: NCHW} to preprocess.'
        : x.dims.length === want.length
          ? ' Resize/crop the data or pick the matching model.'
          : ' The number of axes differs: check the dataset arrays against the model input.';
    throw new DatasetError(
      `${where} has shape [${x.dims.join(', ')}] but ${who} input "${spec.name}" takes [${spec.shape.map((d) => d ?? '?').join(', ')}] (here [${want.join(', ')}]).${hint}`,
    );
  }
}
