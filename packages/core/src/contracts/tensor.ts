import { z } from 'zod';

/**
 * The one home of PBH's element types: datasets, engines, the worker wire format (`pbh_worker/channel.py` mirrors
 * this table and a test checks the two agree) and Profiles all use it.
 */
export const DTYPES = {
  float32: { bytes: 4, array: Float32Array },
  float64: { bytes: 8, array: Float64Array },
  /** Carried as raw IEEE half bits. */
  float16: { bytes: 2, array: Uint16Array },
  int8: { bytes: 1, array: Int8Array },
  uint8: { bytes: 1, array: Uint8Array },
  int32: { bytes: 4, array: Int32Array },
  int64: { bytes: 8, array: BigInt64Array },
  bool: { bytes: 1, array: Uint8Array },
} as const;

export type DType = keyof typeof DTYPES;
export const DTypeSchema = z.enum(Object.keys(DTYPES) as [DType, ...DType[]]);

export type TypedArray = Float32Array | Float64Array | Uint16Array | Int8Array | Uint8Array | Int32Array | BigInt64Array;

/** A dense tensor in row-major order. float16 is carried as raw Uint16 bits. */
export interface Tensor {
  dtype: DType;
  dims: number[];
  data: TypedArray;
}

export type TensorMap = Record<string, Tensor>;

/** A declared model input/output; a dim is a number, or a string/null when symbolic. */
export const TensorSpecSchema = z.object({
  name: z.string(),
  dtype: DTypeSchema,
  shape: z.array(z.union([z.number(), z.string(), z.null()])),
});
export type TensorSpec = z.infer<typeof TensorSpecSchema>;

export function itemSize(dtype: DType): number {
  return DTYPES[dtype].bytes;
}

export function elementCount(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** A view of `length` elements of `dtype` over `buffer` from `byteOffset` (no copy). */
export function typedView(dtype: DType, buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArray {
  return new DTYPES[dtype].array(buffer as ArrayBuffer, byteOffset, length);
}

/** A zeroed array of `length` elements of `dtype`. */
export function typedArray(dtype: DType, length: number): TypedArray {
  return new DTYPES[dtype].array(length);
}
