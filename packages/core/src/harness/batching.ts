import type { PreparedModel } from '../contracts/engine.js';
import type { Tensor, TensorMap } from '../contracts/tensor.js';
import { typedArray } from '../contracts/tensor.js';

/** The tensor with its last row repeated up to `rows` rows: valid input (ids, masks) whatever the model reads. */
function padRows(t: Tensor, rows: number): Tensor {
  const have = t.dims[0]!;
  const row = have === 0 ? 0 : t.data.length / have;
  // Source and target share one dtype; the casts only pick one of the union's set() signatures for TypeScript.
  const data = typedArray(t.dtype, rows * row) as Float32Array;
  data.set(t.data as Float32Array);
  const last = t.data.subarray((have - 1) * row, have * row) as Float32Array;
  for (let r = have; r < rows; r++) data.set(last, r * row);
  return { dtype: t.dtype, dims: [rows, ...t.dims.slice(1)], data: data as Tensor['data'] };
}

/** Outputs cut to their first `rows` rows along the batch axis (outputs without one are kept whole). */
function cutRows(outputs: TensorMap, batch: number, rows: number): TensorMap {
  const out: TensorMap = {};
  for (const [name, t] of Object.entries(outputs)) {
    if (t.dims[0] !== batch) {
      out[name] = t;
      continue;
    }
    const row = t.data.length / batch;
    out[name] = { dtype: t.dtype, dims: [rows, ...t.dims.slice(1)], data: t.data.subarray(0, rows * row) };
  }
  return out;
}

export type LastBatch = 'none' | 'dynamic' | 'padded';

/** How a batch of `rows` rows runs on a model prepared for `batch`. */
export function lastBatchMode(model: PreparedModel, rows: number, batch: number): LastBatch {
  if (rows === batch) return 'none';
  return model.capabilities.smallerBatch ? 'dynamic' : 'padded';
}

/**
 * Outputs for `rows` samples on a model prepared for `batch`: a smaller batch runs at its own size where the model
 * accepts it, else it is padded to the batch size and the padded rows are discarded.
 */
export async function predictRows(model: PreparedModel, feeds: TensorMap, rows: number, batch: number): Promise<TensorMap> {
  if (lastBatchMode(model, rows, batch) !== 'padded') return (await model.sut.infer(feeds)).outputs;
  const padded: TensorMap = {};
  for (const [name, t] of Object.entries(feeds)) padded[name] = padRows(t, batch);
  return cutRows((await model.sut.infer(padded)).outputs, batch, rows);
}
