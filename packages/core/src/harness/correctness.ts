import type { TensorMap } from '../contracts/tensor.js';

export interface OutputComparison {
  name: string;
  maxAbsError: number;
  maxRelError: number;
  passed: boolean;
  mismatch?: string;
}

export interface Comparison {
  maxAbsError: number;
  maxRelError: number;
  passed: boolean;
  /** Every reference output on its own, so a model whose second output is wrong says which. */
  outputs: OutputComparison[];
  mismatch?: string;
}

function compareOne(name: string, actual: TensorMap, reference: TensorMap, atol: number, rtol: number): OutputComparison {
  const ref = reference[name]!;
  const got = actual[name];
  // Errors stay finite numbers (a Profile stores them): a missing or misshapen output says so in `mismatch`.
  if (!got) return { name, maxAbsError: 0, maxRelError: 0, passed: false, mismatch: `output "${name}" is missing` };
  if (got.data.length !== ref.data.length) {
    return { name, maxAbsError: 0, maxRelError: 0, passed: false, mismatch: `output "${name}" has ${got.data.length} values, reference ${ref.data.length}` };
  }
  let maxAbsError = 0;
  let maxRelError = 0;
  let passed = true;
  let nonfinite = 0;
  for (let i = 0; i < ref.data.length; i++) {
    const a = Number(got.data[i]);
    const b = Number(ref.data[i]);
    // numpy.allclose(equal_nan=False): a non-finite value never matches; it is counted, not folded into the errors.
    if (!Number.isFinite(a) || !Number.isFinite(b)) {
      nonfinite++;
      continue;
    }
    const abs = Math.abs(a - b);
    if (!(abs <= atol + rtol * Math.abs(b))) passed = false;
    maxAbsError = Math.max(maxAbsError, abs);
    maxRelError = Math.max(maxRelError, abs / Math.max(Math.abs(b), Number.EPSILON));
  }
  if (nonfinite > 0) {
    return { name, maxAbsError, maxRelError, passed: false, mismatch: `output "${name}" has ${nonfinite} non-finite values (NaN or ±Inf) here or in the reference` };
  }
  return { name, maxAbsError, maxRelError, passed };
}

/** numpy.allclose semantics per element of every output: |a - b| <= atol + rtol * |b|, b being the reference. */
export function compareOutputs(actual: TensorMap, reference: TensorMap, atol: number, rtol: number): Comparison {
  const outputs = Object.keys(reference).map((name) => compareOne(name, actual, reference, atol, rtol));
  const failed = outputs.filter((o) => !o.passed);
  return {
    maxAbsError: Math.max(0, ...outputs.map((o) => o.maxAbsError)),
    maxRelError: Math.max(0, ...outputs.map((o) => o.maxRelError)),
    passed: failed.length === 0,
    outputs,
    ...(failed.length ? { mismatch: failed.map((o) => o.mismatch ?? `output "${o.name}" max abs error ${o.maxAbsError.toExponential(3)}`).join('; ') } : {}),
  };
}
