/**
 * Welch's unequal-variance t-test, used by the History page to decide whether a change between two
 * consecutive runs exceeds run-to-run noise. Two-sided p-value from Student's t distribution with
 * Welch–Satterthwaite degrees of freedom, through the regularized incomplete beta function.
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
  return { t, df, p: studentTwoSidedP(t, df) };
}

export function studentTwoSidedP(t: number, df: number): number {
  if (!Number.isFinite(t)) return 0;
  return Math.min(1, regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5));
}

/** Lanczos approximation (g = 7, n = 9), accurate to ~15 digits for x > 0. */
function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let sum = c[0]!;
  for (let i = 1; i < 9; i++) sum += c[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** I_x(a, b) by Lentz's continued fraction (Numerical Recipes betacf), using the symmetry for fast convergence. */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(x, a, b)) / a;
  return 1 - (front * betaContinuedFraction(1 - x, b, a)) / b;
}

function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 3e-15) break;
  }
  return h;
}
