import { describe, expect, it } from 'vitest';
import { detectableChange, welchTTest } from '../src/lib/welch.js';

// Reference values from SciPy 1.17: scipy.stats.ttest_ind(b, a, equal_var=False).
const CASES = [
  { a: [100, 102, 98], b: [110, 111, 109.5], t: 8.225238322051558, p: 0.006509205994866681, df: 2.5711857203569912 },
  { a: [5.0, 5.1], b: [5.05, 5.2, 4.9, 5.0], t: -0.15617376188860854, p: 0.8842113738370951, df: 3.6202440775305167 },
  { a: [1, 2, 3, 4, 5], b: [1.5, 2.5, 3.5, 4.5, 5.5, 6.5], t: 0.9607689228305228, p: 0.3617968162297748, df: 8.98936170212766 },
  { a: [10, 10.5], b: [30, 31], t: 36.22430123549659, p: 0.003790603045850191, df: 1.4705882352941178 },
];

describe("Welch's t-test (History's change test)", () => {
  it.each(CASES)('matches SciPy for a=$a b=$b', ({ a, b, t, p, df }) => {
    const result = welchTTest(a, b);
    expect(result?.t).toBeCloseTo(t, 10);
    expect(result?.df).toBeCloseTo(df, 10);
    expect(result?.p).toBeCloseTo(p, 10);
  });

  it('gives no test without two values a side, and handles zero spread', () => {
    expect(welchTTest([1], [1, 2])).toBeNull();
    expect(welchTTest([5, 5], [5, 5])?.p).toBe(1);
    expect(welchTTest([5, 5], [6, 6])?.p).toBe(0);
  });
});

describe("the History test's power statement", () => {
  it('names the change that lands exactly on p = alpha, and a larger one for 80% power', () => {
    const a = [100, 103, 98, 101];
    const b = [99, 104, 97, 102];
    const d = detectableChange(a, b, 0.01);
    expect(d).not.toBeNull();
    const mean = a.reduce((s, v) => s + v, 0) / a.length;
    // Shifting b by the threshold changes neither spread: Welch's p is then alpha itself.
    const shifted = welchTTest(a, b.map((v) => v - (b.reduce((s, x) => s + x, 0) / b.length - mean) + d!.threshold * mean));
    expect(shifted?.p).toBeCloseTo(0.01, 10);
    expect(d!.atPower).toBeGreaterThan(d!.threshold);
    expect(detectableChange([1], [1, 2], 0.01)).toBeNull();
  });
});
