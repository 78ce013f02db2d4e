import { UNIT_ROUNDOFF, type Precision } from '../contracts/precision.js';
import type { TensorMap } from '../contracts/tensor.js';
import { halfToNumber } from './half.js';

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
  /** Which rule applied: the config's (fp32), reduced float precision (bf16, fp16), or integer quantization. */
  kind: 'config' | 'reduced_precision' | 'quantized';
}

/** What the model file says about its own arithmetic (`ModelFacts.quantization`, the precision of its I/O). */
export interface ModelArithmetic {
  /** The quantized weight type ("int8", "uint8", "int4", "float16", ...), or null. */
  quantization: string | null;
  /** The model's own precision (its inputs' and outputs' float type). */
  precision: Precision;
}

/** Values as numbers: float16 tensors are carried as raw half bits, which must not be compared as integers. */
export function numericValues(t: TensorMap[string]): ArrayLike<number> {
  if (t.dtype === 'float16') return Float64Array.from(t.data as Uint16Array, halfToNumber);
  if (t.dtype === 'int64') return Float64Array.from(t.data as BigInt64Array, Number);
  return t.data as ArrayLike<number>;
}

/** The same outputs with float16 tensors decoded to float32, so the gate compares values. */
export function decodeHalves(outputs: TensorMap): TensorMap {
  const out: TensorMap = {};
  for (const [k, t] of Object.entries(outputs)) {
    out[k] = t.dtype === 'float16' ? { dtype: 'float32', dims: t.dims, data: Float32Array.from(numericValues(t)) } : t;
  }
  return out;
}

function maxAbs(outputs: TensorMap): number {
  let m = 0;
  for (const t of Object.values(outputs)) {
    const v = numericValues(t);
    for (let i = 0; i < v.length; i++) {
      const a = Math.abs(v[i]!);
      if (Number.isFinite(a)) m = Math.max(m, a);
    }
  }
  return m;
}

/** Bits of an integer quantization type ("int8" and "uint8": 8, "int4": 4); null for a float type or none. */
export function quantizationBits(quantization: string | null): number | null {
  const m = /^u?int(\d+)$/.exec(quantization ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * The gate's tolerance for a model whose arithmetic is quantized to `bits`-bit integers, with static or dynamic
 * scales. A tensor quantized to 2^bits levels over its range (at most 2 max|x|) carries at most max|x| x 2^-bits of
 * rounding error: a unit roundoff u = 2^-bits relative to the tensor's scale, where bf16's is 2^-8 relative to each
 * value. Runtimes round ties, saturate and pick the dynamic range (reduce_range, per channel) differently, so two
 * correct ones differ by a step or so in each quantized layer; the same 8u budget as reduced float precision then
 * gives rtol = 8u and atol = 8u x max|reference|, never tighter than the config's. For int8, 8u = 1/32: 3% of the
 * outputs' scale. Kept as its own function for every rule that knows a model's quantized bits.
 */
export function quantizedTolerance(bits: number, configured: { atol: number; rtol: number }, reference: TensorMap, precision: Precision, quantization: string): Tolerance {
  const u = 2 ** -bits;
  const scale = maxAbs(reference);
  return {
    atol: Math.max(configured.atol, FACTOR * u * scale),
    rtol: Math.max(configured.rtol, FACTOR * u),
    precision,
    kind: 'quantized',
    rule: `${quantization}-quantized model: rtol = ${FACTOR}u, atol = ${FACTOR}u x max|reference| (u = 2^-${bits}, one rounding step of ${bits}-bit integers relative to a tensor's scale; max|reference| = ${scale.toPrecision(4)}), at least the config's`,
  };
}

const coarser = (a: Precision, b: Precision): Precision => ((UNIT_ROUNDOFF[a] ?? 0) >= (UNIT_ROUNDOFF[b] ?? 0) ? a : b);

/**
 * The correctness gate's tolerance for outputs computed in `executed` precision against the reference: for an
 * integer-quantized model the quantized rule above; else, with the coarser of the executed precision and the model's
 * own (an fp16 model's reference ran in fp16 too), the config's atol/rtol where that is fp32 or finer, and for reduced
 * precision rtol = 8u and atol = 8u x max|reference| (an error relative to the outputs' scale, since logits near zero
 * carry the absolute error of their larger neighbours), never tighter than the config's.
 */
export function toleranceFor(executed: Precision, configured: { atol: number; rtol: number }, reference: TensorMap, model?: ModelArithmetic): Tolerance {
  const bits = quantizationBits(model?.quantization ?? null);
  if (bits !== null) return quantizedTolerance(bits, configured, reference, executed, model!.quantization!);
  const precision = model ? coarser(executed, model.precision) : executed;
  const u = UNIT_ROUNDOFF[precision];
  const fine = u === undefined || u <= UNIT_ROUNDOFF.fp32!;
  if (fine) return { ...configured, precision: executed, kind: 'config', rule: `config tolerance (atol ${configured.atol}, rtol ${configured.rtol}) for ${executed}` };
  const scale = maxAbs(reference);
  const atol = Math.max(configured.atol, FACTOR * u * scale);
  const rtol = Math.max(configured.rtol, FACTOR * u);
  const whose = precision === executed ? `${executed} executed` : `${precision} model (executed ${executed})`;
  return {
    atol,
    rtol,
    precision: executed,
    kind: 'reduced_precision',
    rule: `${whose}: rtol = ${FACTOR}u, atol = ${FACTOR}u x max|reference| (u = 2^${Math.log2(u)}, max|reference| = ${scale.toPrecision(4)}), at least the config's`,
  };
}

/** Share of rows whose argmax over the last axis agrees: the decoded result of a classifier or a CTC recogniser. */
export function argmaxAgreement(got: TensorMap[string], ref: TensorMap[string]): number | null {
  const last = ref.dims[ref.dims.length - 1] ?? 0;
  if (last < 2 || got.data.length !== ref.data.length) return null;
  const a = numericValues(got);
  const b = numericValues(ref);
  let agree = 0;
  const rows = b.length / last;
  for (let r = 0; r < rows; r++) {
    let ia = 0;
    let ib = 0;
    for (let k = 1; k < last; k++) {
      if (a[r * last + k]! > a[r * last + ia]!) ia = k;
      if (b[r * last + k]! > b[r * last + ib]!) ib = k;
    }
    if (ia === ib) agree++;
  }
  return agree / rows;
}
