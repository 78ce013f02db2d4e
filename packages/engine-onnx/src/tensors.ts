import * as ort from 'onnxruntime-node';
import { DTYPES, type DType, type Tensor, type TensorMap } from '@pbh/core';

/** onnxruntime-node names its tensor types as PBH names its dtypes; any other type is one PBH cannot carry. */
export function dtypeOfOrt(type: string, what: string): DType {
  // A lookup, not a zod parse: this runs on every output of every predict.
  if (Object.hasOwn(DTYPES, type)) return type as DType;
  throw new Error(`onnxruntime: ${what} is of type ${type}, which PBH cannot score or compare (it carries ${Object.keys(DTYPES).join(', ')})`);
}

/** Zero-copy: ort.Tensor wraps the same typed array. */
export function toOrt(t: Tensor): ort.Tensor {
  return new ort.Tensor(t.dtype as ort.Tensor.Type, t.data as ort.Tensor.DataType, t.dims);
}

/** Zero-copy: the outputs' typed arrays and dims are shared with the ort.Tensor, which nothing else holds. */
export function fromOrt(outputs: ort.InferenceSession.OnnxValueMapType): TensorMap {
  const out: TensorMap = {};
  for (const name in outputs) {
    const value = outputs[name]!;
    out[name] = { dtype: dtypeOfOrt(value.type, `output "${name}"`), dims: value.dims as number[], data: value.data as Tensor['data'] };
  }
  return out;
}
