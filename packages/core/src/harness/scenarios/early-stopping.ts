/**
 * LoadGen's early stopping (loadgen/early_stopping.cc, results.cc), ported: with t queries over the latency being
 * estimated among h + t, is the chance of seeing t or fewer by luck small enough (confidence 0.99, tolerance 0) to
 * claim the percentile? The arithmetic follows LoadGen's, so PBH's estimates match LoadGen's.
 */

const CONFIDENCE = 0.99;
const TOLERANCE = 0;

function lgamma(x: number): number {
  // Lanczos approximation (g = 7, n = 9), accurate to ~1e-15 for x > 0: what std::lgamma gives LoadGen.
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

const lbeta = (x: number, y: number): number => lgamma(x) + lgamma(y) - lgamma(x + y);

/** Gauss's hypergeometric 2F1 with a = 1 (DLMF 15.2.E1), LoadGen's series and tolerance. */
function hyp2f1A1(b: number, c: number, x: number): number {
  const tol = 1 / 2 ** 33;
  let term = 1;
  let result = 1;
  for (let i = 0; Math.abs(term) > tol; i++) {
    term *= ((b + i) * x) / (c + i);
    result += term;
  }
  return result;
}

function betaRegularized(x: number, a: number, b: number): number {
  return (Math.exp(a * Math.log(x) + (b - 1) * Math.log(1 - x) - lbeta(a, b)) / a) * hyp2f1A1(1 - b, 1 + a, x / (x - 1));
}

/** The odds of t or fewer over-latency queries among h + t when each is over with probability 1 - (p - d). */
const odds = (h: number, t: number, p: number, d: number): number => betaRegularized(p - d, h, 1 + t);

/** The fewest under-latency queries h that make t over-latency ones a passing result: LoadGen's find_min_passing. */
export function minPassingQueries(t: number, p: number, d = TOLERANCE, c = CONFIDENCE): number {
  // h grows about linearly in t; search a bracket wide enough for any t.
  let lo = 1;
  let hi = Math.ceil(Math.log(1 - c) / Math.log(p - d)) + Math.ceil(((t + 1) * (p - d)) / (1 - p + d)) * 4 + 16;
  while (odds(hi, t, p, d) >= 1 - c) hi *= 2;
  let count = hi - lo;
  while (count > 0) {
    const step = Math.floor(count / 2);
    const h = lo + step;
    if (odds(h, t, p, d) < 1 - c) count = step;
    else {
      lo = h + 1;
      count -= step + 1;
    }
  }
  return lo;
}

export interface EarlyStopping {
  /** The early-stopping estimate of the percentile (LoadGen's percentile_estimate), or null when too few queries. */
  estimate: number | null;
  /** Queries needed before any estimate exists (h_min + 1). */
  needed: number;
}

/** The fewest queries from which early stopping can estimate `percentile` at all (p90: 64, p99: 662). */
export function earlyStoppingQueries(percentile: number): number {
  return minPassingQueries(1, percentile) + 1;
}

/** Single/multi stream: the latency that early stopping can claim at `percentile`, from ascending latencies. */
export function earlyStoppingEstimate(sortedLatencies: ArrayLike<number>, percentile: number): EarlyStopping {
  const n = sortedLatencies.length;
  const needed = earlyStoppingQueries(percentile);
  if (n < needed) return { estimate: null, needed };
  let t = 1;
  for (let i = 2; i < n + 1; i++) {
    if (n < minPassingQueries(i, percentile) + i) {
      t = i - 1;
      break;
    }
  }
  return { estimate: sortedLatencies[n - t]!, needed };
}

/** Server: with `over` queries past the latency bound among `issued`, does early stopping let the run pass? */
export function serverEarlyStoppingPasses(over: number, issued: number, percentile: number): { passes: boolean; needed: number } {
  const h = minPassingQueries(over, percentile);
  return { passes: issued >= h + over, needed: h + over };
}
