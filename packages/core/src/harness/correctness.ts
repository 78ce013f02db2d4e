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
  if (!got) return { name, maxAbsError: Infinity, maxRelError: Infinity, passed: false, mismatch: `output "${name}" is missing` };
  if (got.data.length !== ref.data.length) {
    return { name, maxAbsError: Infinity, maxRelError: Infinity, passed: false, mismatch: `output "${name}" has ${got.data.length} values, reference ${ref.data.length}` };
  }
  let maxAbsError = 0;
  let maxRelError = 0;
  let passed = true;
  for (let i = 0; i < ref.data.length; i++) {
    const a = Number(got.data[i]);
    const b = Number(ref.data[i]);
    const abs = Math.abs(a - b);
    if (!(abs <= atol + rtol * Math.abs(b))) passed = false;
    if (!(abs <= maxAbsError)) maxAbsError = Number.isNaN(abs) ? Infinity : abs;
    const rel = abs / Math.max(Math.abs(b), Number.EPSILON);
    if (!(rel <= maxRelError)) maxRelError = Number.isNaN(rel) ? Infinity : rel;
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
