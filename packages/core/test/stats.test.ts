import { describe, expect, it } from 'vitest';
import { percentile, summarize, tCritical95 } from '../src/stats/summary.js';

describe('summarize', () => {
  it('matches numpy linear percentiles and sample variance', () => {
    const v = [7, 1, 3, 9, 5, 2, 8, 4, 6, 10];
    const s = summarize(v);
    // numpy.percentile(v, [50, 90, 95, 99]) -> 5.5, 9.1, 9.55, 9.91 ; np.var(v, ddof=1) -> 9.1666...
    expect(s.p50).toBeCloseTo(5.5, 12);
    expect(s.p90).toBeCloseTo(9.1, 12);
    expect(s.p95).toBeCloseTo(9.55, 12);
    expect(s.p99).toBeCloseTo(9.91, 12);
    expect(s.variance).toBeCloseTo(9.166666666666666, 12);
    expect(s.std).toBeCloseTo(Math.sqrt(9.166666666666666), 12);
    expect(s.min).toBe(1);
    expect(s.max).toBe(10);
    // t(0.975, 9) = 2.262
    const half = (2.262 * s.std) / Math.sqrt(10);
    expect(s.ci95_low).toBeCloseTo(5.5 - half, 9);
    expect(s.ci95_high).toBeCloseTo(5.5 + half, 9);
  });

  it('collapses honestly for one value and reports NaN for none', () => {
    const one = summarize([42]);
    expect(one).toMatchObject({ n: 1, mean: 42, std: 0, ci95_low: 42, ci95_high: 42, p99: 42 });
    expect(Number.isNaN(summarize([]).mean)).toBe(true);
  });

  it('uses the normal critical value past 30 degrees of freedom', () => {
    expect(tCritical95(1)).toBeCloseTo(12.706);
    expect(tCritical95(100)).toBe(1.96);
    expect(percentile(Float64Array.from([1, 2]), 0.5)).toBe(1.5);
  });
});
