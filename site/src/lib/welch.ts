import { studentTTwoSidedP } from '@pbh/core';

/**
 * Welch's unequal-variance t-test, used by the History page to decide whether a change between two
 * consecutive runs exceeds run-to-run noise. Two-sided p-value from core's Student's t distribution
 * (the one behind every CI PBH reports) with Welch–Satterthwaite degrees of freedom.
 */

export interface WelchResult {
  t: number;
  df: number;
  /** Two-sided p-value. */
  p: number;
}

function meanVar(values: readonly number[]): { mean: number; variance: number } {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1);
  return { mean, variance };
}

/** Null when either side has fewer than two values (no variance, no test). */
export function welchTTest(a: readonly number[], b: readonly number[]): WelchResult | null {
  if (a.length < 2 || b.length < 2) return null;
  const A = meanVar(a);
  const B = meanVar(b);
  const va = A.variance / a.length;
  const vb = B.variance / b.length;
  const se2 = va + vb;
  if (se2 === 0) {
    // No spread on either side: identical means are no change, any difference is certain.
    return A.mean === B.mean ? { t: 0, df: a.length + b.length - 2, p: 1 } : { t: Infinity * Math.sign(B.mean - A.mean), df: a.length + b.length - 2, p: 0 };
  }
  const t = (B.mean - A.mean) / Math.sqrt(se2);
  const df = se2 ** 2 / ((va ** 2) / (a.length - 1) + (vb ** 2) / (b.length - 1));
  return { t, df, p: studentTTwoSidedP(t, df) };
}
