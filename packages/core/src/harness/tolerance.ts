import { UNIT_ROUNDOFF, type Precision } from '../contracts/precision.js';
import type { TensorMap } from '../contracts/tensor.js';

/**
 * Layers whose rounding errors the reduced-precision tolerance allows for. Each layer that rounds its two operands
 * to a precision with unit roundoff u adds at most 2u of relative error to its dot products (accumulation stays
 * fp32 on the runtimes PBH drives); errors that add up over 4 layers in the worst case, or that grow as a random
 * walk (sqrt(L) * 2u) over up to 16 layers, stay within 8u.
 */
export const REDUCED_PRECISION_LAYERS = 4;
const FACTOR = 2 * REDUCED_PRECISION_LAYERS;

export interface Tolerance {
  atol: number;
  rtol: number;
  precision: Precision;
  rule: string;
}

function maxAbs(outputs: TensorMap): number {
  let m = 0;
  for (const t of Object.values(outputs)) for (const v of t.data) m = Math.max(m, Math.abs(Number(v)));
  return m;
}

/**
 * The correctness gate's tolerance for outputs computed in `executed` precision against an fp32 (or finer)
 * reference: the config's atol/rtol where the arithmetic is the reference's own, and for reduced precision
 * rtol = 8u and atol = 8u x max|reference| (an error relative to the outputs' scale, since logits near zero carry
 * the absolute error of their larger neighbours), never tighter than the config's.
 */
export function toleranceFor(executed: Precision, configured: { atol: number; rtol: number }, reference: TensorMap): Tolerance {
  const u = UNIT_ROUNDOFF[executed];
  const fine = u === undefined || u <= UNIT_ROUNDOFF.fp32!;
  if (fine) return { ...configured, precision: executed, rule: `config tolerance (atol ${configured.atol}, rtol ${configured.rtol}) for ${executed}` };
  const scale = maxAbs(reference);
  const atol = Math.max(configured.atol, FACTOR * u * scale);
  const rtol = Math.max(configured.rtol, FACTOR * u);
  return {
    atol,
    rtol,
    precision: executed,
    rule: `${executed} executed: rtol = ${FACTOR}u, atol = ${FACTOR}u x max|reference| (u = 2^${Math.log2(u)}, max|reference| = ${scale.toPrecision(4)}), at least the config's`,
  };
}
