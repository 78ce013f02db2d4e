import type { TensorMap } from '../contracts/tensor.js';

export interface Comparison {
  maxAbsError: number;
  maxRelError: number;
  passed: boolean;
  mismatch?: string;
}

/** numpy.allclose semantics per element: |a - b| <= atol + rtol * |b|, b being the reference. */
export function compareOutputs(actual: TensorMap, reference: TensorMap, atol: number, rtol: number): Comparison {
  let maxAbsError = 0;
  let maxRelError = 0;
  let passed = true;
  for (const [name, ref] of Object.entries(reference)) {
    const got = actual[name];
    if (!got) return { maxAbsError: Infinity, maxRelError: Infinity, passed: false, mismatch: `output "${name}" is missing` };
    if (got.data.length !== ref.data.length) {
      return { maxAbsError: Infinity, maxRelError: Infinity, passed: false, mismatch: `output "${name}" has ${got.data.length} values, reference ${ref.data.length}` };
    }
    for (let i = 0; i < ref.data.length; i++) {
      const a = Number(got.data[i]);
      const b = Number(ref.data[i]);
      const abs = Math.abs(a - b);
      if (!(abs <= atol + rtol * Math.abs(b))) passed = false;
      if (!(abs <= maxAbsError)) maxAbsError = Number.isNaN(abs) ? Infinity : abs;
      const rel = abs / Math.max(Math.abs(b), Number.EPSILON);
      if (!(rel <= maxRelError)) maxRelError = Number.isNaN(rel) ? Infinity : rel;
    }
  }
  return { maxAbsError, maxRelError, passed };
}
