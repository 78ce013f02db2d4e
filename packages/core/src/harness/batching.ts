import type { PreparedModel } from '../contracts/engine.js';
import type { Tensor, TensorMap } from '../contracts/tensor.js';
import { typedArray } from '../contracts/tensor.js';

/**
 * The tensor with its last sample along `axis` repeated up to `rows` samples: valid input (ids, masks, a recurrent
 * state whose batch is on axis 1) whatever the model reads.
 */
function padRows(t: Tensor, rows: number, axis = 0): Tensor {
  const have = t.dims[axis]!;
  const outer = t.dims.slice(0, axis).reduce((a, d) => a * d, 1);
  const inner = t.dims.slice(axis + 1).reduce((a, d) => a * d, 1);
  // Source and target share one dtype; the casts only pick one of the union's set() signatures for TypeScript.
  const data = typedArray(t.dtype, outer * rows * inner) as Float32Array;
  const src = t.data as Float32Array;
  for (let o = 0; o < outer; o++) {
    const from = o * have * inner;
    const to = o * rows * inner;
    data.set(src.subarray(from, from + have * inner), to);
    const last = src.subarray(from + (have - 1) * inner, from + have * inner);
    for (let r = have; r < rows; r++) data.set(last, to + r * inner);
  }
  const dims = t.dims.slice();
  dims[axis] = rows;
  return { dtype: t.dtype, dims, data: data as Tensor['data'] };
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
 * accepts it, else it is padded to the batch size (each input on its batch axis, `batchAxes`, default 0) and the
 * padded rows are discarded.
 */
export async function predictRows(model: PreparedModel, feeds: TensorMap, rows: number, batch: number, batchAxes: Record<string, number | null> = {}): Promise<TensorMap> {
  if (lastBatchMode(model, rows, batch) !== 'padded') return (await model.sut.infer(feeds)).outputs;
  const padded: TensorMap = {};
  for (const [name, t] of Object.entries(feeds)) {
    // Each input on its own batch axis (the feeder's); one fed whole every query (a constant) is not padded.
    const axis = name in batchAxes ? batchAxes[name]! : 0;
    padded[name] = axis === null ? t : padRows(t, batch, axis);
  }
  return cutRows((await model.sut.infer(padded)).outputs, batch, rows);
}
