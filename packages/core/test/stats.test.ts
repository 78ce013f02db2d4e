import { describe, expect, it } from 'vitest';
import { studentTTwoSidedP, tCritical95 } from '../src/stats/student-t.js';
import { percentile, summarize } from '../src/stats/summary.js';

describe('summarize', () => {
  it("takes LoadGen's nearest-rank percentiles and the sample variance", () => {
    const v = [7, 1, 3, 9, 5, 2, 8, 4, 6, 10];
    const s = summarize(v);
    // LoadGen's results.cc: sorted[floor(n * p)] -> 6, 10, 10, 10 ; np.var(v, ddof=1) -> 9.1666...
    expect(s.p50).toBe(6);
    expect(s.p90).toBe(10);
    expect(s.p95).toBe(10);
    expect(s.p99).toBe(10);
    expect(s.variance).toBeCloseTo(9.166666666666666, 12);
    expect(s.std).toBeCloseTo(Math.sqrt(9.166666666666666), 12);
    expect(s.min).toBe(1);
    expect(s.max).toBe(10);
    // scipy.stats.t.ppf(0.975, 9)
    const half = (2.262157162798205 * s.std) / Math.sqrt(10);
    expect(s.ci95_low).toBeCloseTo(5.5 - half, 9);
    expect(s.ci95_high).toBeCloseTo(5.5 + half, 9);
  });

  it('collapses honestly for one value and reports NaN for none', () => {
    const one = summarize([42]);
    expect(one).toMatchObject({ n: 1, mean: 42, std: 0, ci95_low: 42, ci95_high: 42, p99: 42 });
    expect(Number.isNaN(summarize([]).mean)).toBe(true);
  });

  it('never interpolates: the sample at index floor(n x p)', () => {
    expect(percentile(Float64Array.from([1, 2]), 0.5)).toBe(2);
    expect(percentile(Float64Array.from([1, 2, 3, 4]), 0.49)).toBe(2);
    expect(percentile(Float64Array.from(Array.from({ length: 100 }, (_, i) => i + 1)), 0.99)).toBe(100);
  });
});

// Reference values from SciPy: scipy.stats.t.ppf(0.975, df) and 2 * scipy.stats.t.sf(abs(t), df).
describe("Student's t", () => {
  it.each([
    [1, 12.706204736174694],
    [2.5, 3.5746548420036817],
    [9, 2.262157162798205],
    [30, 2.0422724563012378],
    [100, 1.9839715185235518],
    [1000, 1.9623390808264083],
  ])('t(0.975, %s) matches SciPy', (df, expected) => {
    expect(tCritical95(df)).toBeCloseTo(expected, 12);
  });

  it('has no critical value below one degree of freedom', () => {
    expect(Number.isNaN(tCritical95(0))).toBe(true);
  });

  it.each([
    [2.0, 3, 0.13932596855884305],
    [-0.5, 7.5, 0.6314109646224545],
    [0, 4, 1],
  ])('the two-sided p of t=%s with df=%s matches SciPy', (t, df, expected) => {
    expect(studentTTwoSidedP(t, df)).toBeCloseTo(expected, 12);
  });
});
