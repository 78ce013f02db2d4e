import { studentTQuantile, studentTTwoSidedP } from './student-t.js';

/**
 * Welch's unequal-variance t-test and the ratio of two means with its interval: what History's change points and
 * `pbh compare` say about two samples of throughputs (sessions, or runs' means). Two-sided p-values from core's
 * Student's t with Welch–Satterthwaite degrees of freedom.
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

/** Welch–Satterthwaite degrees of freedom of two variance terms (each a variance over its count) and their counts. */
function satterthwaite(va: number, na: number, vb: number, nb: number): number {
  const se2 = va + vb;
  return se2 === 0 ? na + nb - 2 : se2 ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1));
}

/** Standard error of the difference of means and its Welch–Satterthwaite degrees of freedom. */
function welchSe(a: readonly number[], b: readonly number[]): { se: number; df: number; a: number; b: number } {
  const A = meanVar(a);
  const B = meanVar(b);
  const va = A.variance / a.length;
  const vb = B.variance / b.length;
  return { se: Math.sqrt(va + vb), df: satterthwaite(va, a.length, vb, b.length), a: A.mean, b: B.mean };
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

export interface RatioInterval {
  /** mean(b) / mean(a). */
  ratio: number;
  low: number;
  high: number;
  /** Confidence level of [low, high], e.g. 0.95. */
  level: number;
  /** Welch's test of the two means (the same data): p < 1 - level exactly when the interval leaves out 1, up to the log scale. */
  p: number;
  df: number;
}

/**
 * mean(b) / mean(a) with a confidence interval: the delta method on the log of the ratio (its variance is each side's
 * squared coefficient of variation over its count), with Welch–Satterthwaite degrees of freedom, so the interval is
 * symmetric in log space and a ratio and its inverse get the same verdict. Null without two positive-mean values a side.
 */
export function ratioInterval(a: readonly number[], b: readonly number[], level = 0.95): RatioInterval | null {
  if (a.length < 2 || b.length < 2) return null;
  const A = meanVar(a);
  const B = meanVar(b);
  if (!(A.mean > 0) || !(B.mean > 0)) return null;
  const va = A.variance / a.length / A.mean ** 2;
  const vb = B.variance / b.length / B.mean ** 2;
  const df = satterthwaite(va, a.length, vb, b.length);
  const se = Math.sqrt(va + vb);
  const logRatio = Math.log(B.mean / A.mean);
  const half = se === 0 ? 0 : studentTQuantile(1 - (1 - level) / 2, df) * se;
  const p = se === 0 ? (logRatio === 0 ? 1 : 0) : studentTTwoSidedP(logRatio / se, df);
  return { ratio: B.mean / A.mean, low: Math.exp(logRatio - half), high: Math.exp(logRatio + half), level, p, df };
}
