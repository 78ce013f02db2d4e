import tCdf from '@stdlib/stats-base-dists-t-cdf';
import tQuantile from '@stdlib/stats-base-dists-t-quantile';

/**
 * Student's t distribution for everything PBH reports: the 95% CI of every summary and the History
 * page's Welch test. stdlib's functions are exact to double precision (checked against SciPy in the
 * tests), where a table of critical values stops at a few digits and at df = 30.
 */

/** The two-sided 95% critical value t(0.975, df); NaN below one degree of freedom. */
export function tCritical95(df: number): number {
  return df < 1 ? NaN : tQuantile(0.975, df);
}

/** P(|T| >= |t|) for T ~ t(df): the two-sided p-value of a t statistic. */
export function studentTTwoSidedP(t: number, df: number): number {
  return Math.min(1, 2 * tCdf(-Math.abs(t), df));
}

/** The p-quantile of t(df): what the History page's power statement solves for; NaN below one degree of freedom. */
export function studentTQuantile(p: number, df: number): number {
  return df < 1 ? NaN : tQuantile(p, df);
}
