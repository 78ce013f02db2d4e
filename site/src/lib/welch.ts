import { studentTQuantile, studentTTwoSidedP } from '@pbh/core';

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

/** Standard error of the difference of means and its Welch–Satterthwaite degrees of freedom. */
function welchSe(a: readonly number[], b: readonly number[]): { se: number; df: number; a: number; b: number } {
  const A = meanVar(a);
  const B = meanVar(b);
  const va = A.variance / a.length;
  const vb = B.variance / b.length;
  const se2 = va + vb;
  const df = se2 === 0 ? a.length + b.length - 2 : se2 ** 2 / ((va ** 2) / (a.length - 1) + (vb ** 2) / (b.length - 1));
  return { se: Math.sqrt(se2), df, a: A.mean, b: B.mean };
}

/** Null when either side has fewer than two values (no variance, no test). */
export function welchTTest(a: readonly number[], b: readonly number[]): WelchResult | null {
  if (a.length < 2 || b.length < 2) return null;
  const { se, df, a: meanA, b: meanB } = welchSe(a, b);
  if (se === 0) {
    // No spread on either side: identical means are no change, any difference is certain.
    return meanA === meanB ? { t: 0, df, p: 1 } : { t: Infinity * Math.sign(meanB - meanA), df, p: 0 };
  }
  const t = (meanB - meanA) / se;
  return { t, df, p: studentTTwoSidedP(t, df) };
}

export interface Detectable {
  /** The smallest relative change of the mean that reaches p < alpha with these sessions and this spread (half the time). */
  threshold: number;
  /** The relative change the test would flag with probability `power` (t-approximation of Welch's test's power). */
  atPower: number;
  power: number;
}

/**
 * The test's power, from the data: the relative change of `a`'s mean that Welch's test at `alpha` (two-sided) could
 * detect given both sides' session counts and spreads. Null without two sessions a side or with a zero mean.
 */
export function detectableChange(a: readonly number[], b: readonly number[], alpha: number, power = 0.8): Detectable | null {
  if (a.length < 2 || b.length < 2) return null;
  const { se, df, a: meanA } = welchSe(a, b);
  if (meanA === 0) return null;
  const critical = studentTQuantile(1 - alpha / 2, df);
  return { threshold: (critical * se) / Math.abs(meanA), atPower: ((critical + studentTQuantile(power, df)) * se) / Math.abs(meanA), power };
}
