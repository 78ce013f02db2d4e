/** Element types PBH moves between datasets, engines and workers. */
export type DType = 'float32' | 'float64' | 'float16' | 'int8' | 'uint8' | 'int32' | 'int64' | 'bool';

export type TypedArray =
  | Float32Array
  | Float64Array
  | Uint16Array
  | Int8Array
  | Uint8Array
  | Int32Array
  | BigInt64Array;

/** A dense tensor in row-major order. float16 is carried as raw Uint16 bits. */
export interface Tensor {
  dtype: DType;
  dims: number[];
  data: TypedArray;
}

export type TensorMap = Record<string, Tensor>;

/** A declared model input/output; a dim is a number, or a string/null when symbolic. */
export interface TensorSpec {
  name: string;
  dtype: DType;
  shape: (number | string | null)[];
}
