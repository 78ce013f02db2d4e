import type { PreparedModel } from '../contracts/engine.js';
import type { BatchScore } from '../contracts/scorer.js';
import type { TensorMap } from '../contracts/tensor.js';
import { lastBatchMode, predictRows, type LastBatch } from './batching.js';
import type { Deadline } from './deadline.js';
import type { CellPlan } from './plan.js';

export interface AccuracyPass {
  /** Per scorer, per batch. */
  scores: BatchScore[][];
  samples: number;
  lastBatch: LastBatch;
  /** NaN and ±Inf values across every float output of every sample. */
  nonfinite: number;
}

function nonfiniteValues(outputs: TensorMap): number {
  let n = 0;
  for (const t of Object.values(outputs)) {
    if (t.dtype === 'float32' || t.dtype === 'float64') {
      for (const v of t.data as Float32Array) if (!Number.isFinite(v)) n++;
    } else if (t.dtype === 'float16') {
      // Raw half bits: an all-ones exponent is Inf or NaN.
      for (const bits of t.data as Uint16Array) if ((bits & 0x7c00) === 0x7c00) n++;
    }
  }
  return n;
}

/** Batch k of the accuracy pass covers samples [k*B, min((k+1)*B, N)): every sample, the last batch possibly short. */
export function accuracyBatches(size: number, batch: number): { start: number; rows: number }[] {
  const out: { start: number; rows: number }[] = [];
  for (let start = 0; start < size; start += batch) out.push({ start, rows: Math.min(batch, size - start) });
  return out;
}

/**
 * LoadGen's accuracy mode, apart from performance mode: every sample of the dataset once, outside any tracker, in
 * batches of the cell's size (the last one short, run at its size or padded), each scored by every scorer.
 */
export async function scoreAll(plan: CellPlan, model: PreparedModel, references: TensorMap[], deadline: Deadline): Promise<AccuracyPass> {
  const scores: BatchScore[][] = plan.scorers.map(() => []);
  const batches = accuracyBatches(plan.dataset.size, plan.batchSize);
  let nonfinite = 0;
  for (const [k, { start, rows }] of batches.entries()) {
    deadline.check();
    const raw = plan.dataset.read(start, rows);
    const outputs = await deadline.run(predictRows(model, plan.feeder.feed(raw), rows, plan.batchSize, plan.feeder.batchAxes));
    nonfinite += nonfiniteValues(outputs);
    plan.scorers.forEach((s, i) => {
      scores[i]!.push(s.scorer.score(outputs, raw.labels, { outputName: s.output, reference: s.scorer.needsReference ? references[k] : undefined }));
    });
  }
  const last = batches.at(-1)!;
  return { scores, samples: plan.dataset.size, lastBatch: lastBatchMode(model, last.rows, plan.batchSize), nonfinite };
}
