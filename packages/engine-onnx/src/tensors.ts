import * as ort from 'onnxruntime-node';
import type { DType, Tensor, TensorMap } from '@pbh/core';

const FROM_ORT: Partial<Record<string, DType>> = {
  float32: 'float32', float64: 'float64', float16: 'float16', int8: 'int8', uint8: 'uint8', int32: 'int32', int64: 'int64', bool: 'bool',
};

/** Zero-copy: ort.Tensor wraps the same typed array. */
export function toOrt(t: Tensor): ort.Tensor {
  return new ort.Tensor(t.dtype as ort.Tensor.Type, t.data as ort.Tensor.DataType, t.dims);
}

/** Zero-copy: the outputs' typed arrays and dims are shared with the ort.Tensor, which nothing else holds. */
export function fromOrt(outputs: ort.InferenceSession.OnnxValueMapType): TensorMap {
  const out: TensorMap = {};
  for (const name in outputs) {
    const value = outputs[name]!;
    const dtype = FROM_ORT[value.type];
    if (!dtype) throw new Error(`onnxruntime returned output "${name}" of type ${value.type}, which PBH cannot score or compare`);
    out[name] = { dtype, dims: value.dims as number[], data: value.data as Tensor['data'] };
  }
  return out;
}

export function ortTypeToDType(type: string): DType {
  const t = type.replace(/^tensor\(/, '').replace(/\)$/, '');
  const map: Record<string, DType> = { float: 'float32', double: 'float64', float16: 'float16', int8: 'int8', uint8: 'uint8', int32: 'int32', int64: 'int64', bool: 'bool' };
  return map[t] ?? (t as DType);
}
