/** Seeded synthetic histories: each point is a run of SESSIONS sessions around a level that steps where it is told. */

export const SESSIONS = 5;

/** mulberry32: a small seeded generator, so every run of the test sees the same series. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Box–Muller on the seeded generator. */
export function gauss(next: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

export interface Step {
  /** The first point at the new level. */
  at: number;
  /** Size in units of the session noise (positive: faster). */
  sigmas: number;
}

/** Per point, SESSIONS session throughputs around the level (session noise sessionSigma). */
export function synthetic(seed: number, n: number, steps: readonly Step[], level = 1000, sessionSigma = 20): number[][] {
  const normal = gauss(rng(seed));
  const points: number[][] = [];
  let current = level;
  for (let i = 0; i < n; i++) {
    for (const step of steps) if (step.at === i) current += step.sigmas * sessionSigma;
    points.push(Array.from({ length: SESSIONS }, () => current + sessionSigma * normal()));
  }
  return points;
}

export const meanOf = (values: readonly number[]): number => values.reduce((s, v) => s + v, 0) / values.length;
