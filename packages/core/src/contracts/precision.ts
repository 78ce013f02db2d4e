import { z } from 'zod';
import type { DType } from './tensor.js';

/**
 * The arithmetic a runtime executes a model in. Like batch size it is part of the cell: PBH records what was asked
 * for and what the runtime executed (read back from it), and the correctness gate's tolerance follows the latter.
 */
export const PrecisionSchema = z.enum(['fp32', 'fp16', 'bf16', 'fp64', 'int8']);
export type Precision = z.infer<typeof PrecisionSchema>;

/** Unit roundoff (half an ulp at 1) of each floating precision: 2^-(mantissa bits + 1). */
export const UNIT_ROUNDOFF: Partial<Record<Precision, number>> = {
  fp64: 2 ** -53,
  fp32: 2 ** -24,
  bf16: 2 ** -8,
  fp16: 2 ** -11,
};

const OF_DTYPE: Partial<Record<DType, Precision>> = { float32: 'fp32', float16: 'fp16', float64: 'fp64', int8: 'int8', uint8: 'int8' };

/** The precision a model is stored in: that of its first floating (or quantized) input, else fp32. */
export function precisionOfDtypes(dtypes: readonly DType[]): Precision {
  for (const d of dtypes) {
    const p = OF_DTYPE[d];
    if (p && p !== 'int8') return p;
  }
  return 'fp32';
}

/** What a prepared model reports about the arithmetic it runs, read back from the runtime. */
export interface ExecutedPrecision {
  executed: Precision;
  /** How the runtime said so (a property it reported, a census of kernel precisions). */
  evidence: string;
  /** Weight-only compression under that arithmetic (an LLM's int4 or int8 weights); absent or null: none. */
  weights?: string | null;
}

export const PrecisionFactsSchema = z.object({
  /** The model file's own precision. */
  model: PrecisionSchema,
  /** What the config asked for (the model's own when it said nothing). */
  requested: PrecisionSchema,
  executed: PrecisionSchema,
  evidence: z.string(),
  /** Weight-only compression the engine read from the model it runs (int4, int8); null or absent: none. */
  weights: z.string().nullable().optional(),
});
export type PrecisionFacts = z.infer<typeof PrecisionFactsSchema>;
