import type { Stats } from '../contracts/profile.js';
import { tCritical95 } from './student-t.js';

/**
 * The one percentile of PBH, LoadGen's (results.cc): the value at 0-based index floor(n x q) of the ascending list,
 * nearest rank and never interpolated, so a Profile's p99 and its scenario's reported p99 are the same sample.
 * `sorted` ascending.
 */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  return sorted[Math.min(n - 1, Math.floor(n * q))]!;
}

/**
 * Summary statistics. Variance is the sample variance (n-1); the 95% CI is for the mean, Student-t.
 * With n = 1 the spread is 0 and the CI collapses to the value, which is what a single session honestly supports.
 */
export function summarize(values: ArrayLike<number>): Stats {
  const n = values.length;
  if (n === 0) {
    return { n: 0, mean: NaN, std: NaN, variance: NaN, min: NaN, p50: NaN, p90: NaN, p95: NaN, p99: NaN, max: NaN, ci95_low: NaN, ci95_high: NaN };
  }
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  const mean = sum / n;
  let sq = 0;
  for (let i = 0; i < n; i++) sq += (sorted[i]! - mean) ** 2;
  const variance = n > 1 ? sq / (n - 1) : 0;
  const std = Math.sqrt(variance);
  const half = n > 1 ? (tCritical95(n - 1) * std) / Math.sqrt(n) : 0;
  return {
    n,
    mean,
    std,
    variance,
    min: sorted[0]!,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    max: sorted[n - 1]!,
    ci95_low: mean - half,
    ci95_high: mean + half,
  };
}
