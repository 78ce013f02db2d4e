import type { Tensor, TensorMap } from '../contracts/tensor.js';

/** The output a scorer reads: the named one, else the first. Rows = axis 0. */
export function scoredOutput(outputs: TensorMap, name: string): { t: Tensor; rows: number; width: number } {
  const t = outputs[name] ?? Object.values(outputs)[0];
  if (!t) throw new Error('the model returned no outputs to score');
  const rows = t.dims[0] ?? 1;
  const width = rows === 0 ? 0 : t.data.length / rows;
  return { t, rows, width };
}

export function numberAt(t: Tensor, i: number): number {
  return Number(t.data[i]!);
}
