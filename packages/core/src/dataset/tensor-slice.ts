import type { Tensor } from '../contracts/tensor.js';

export function sampleShape(t: Tensor): number[] {
  return t.dims.slice(1);
}

/** Rows [start, start+count) of a tensor whose axis 0 is samples, as a zero-copy view. */
export function sliceRows(t: Tensor, start: number, count: number): Tensor {
  const row = sampleShape(t).reduce((a, b) => a * b, 1);
  return { dtype: t.dtype, dims: [count, ...sampleShape(t)], data: t.data.subarray(start * row, (start + count) * row) };
}
