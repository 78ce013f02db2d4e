import type { QuerySchedule } from '../../contracts/engine.js';
import { minPassingQueries } from './early-stopping.js';
import type { ScenarioSettings } from './settings.js';

/** Seedable and fast (mulberry32): enough for arrival times, not for cryptography. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Poisson arrivals at `qps` (exponential gaps with mean 1/qps, from `seed`: LoadGen's schedule_rng_seed role), at
 * least `count` of them and until one is scheduled at or after `untilNs`, as LoadGen generates a server run.
 */
export function poissonArrivalsNs(count: number, qps: number, seed: number, untilNs = 0): number[] {
  const rand = mulberry32(seed);
  const out: number[] = [];
  let t = 0;
  while (out.length < count || t < untilNs) {
    t += (-Math.log(1 - rand()) / qps) * 1e9;
    out.push(t);
  }
  return out;
}

/**
 * The queries of one scenario run over K resident batches, cycling through them:
 * server — one-batch queries at Poisson arrivals until min_duration is scheduled, at least min_query_count and early
 *   stopping's minimum;
 * offline — every sample at once as batches all due at 0: the performance set, at least min_sample_count, and
 *   enough to last min_duration at the expected rate.
 * Single and multi stream are closed loops: the session loop runs them.
 */
export function openSchedule(
  s: ScenarioSettings,
  residentBatches: number,
  batchSize: number,
  concurrency: number,
  seed: number,
  expectedSamplesPerS: number,
): QuerySchedule {
  if (s.kind === 'server') {
    // At least as many queries as early stopping needs to pass with none over the bound: fewer can never be VALID.
    const count = Math.max(s.minQueryCount, minPassingQueries(0, s.percentile));
    const arrivalsNs = poissonArrivalsNs(count, s.targetQps, seed, s.minDurationMs * 1e6);
    return { batches: arrivalsNs.map((_, i) => i % residentBatches), arrivalsNs, concurrency };
  }
  // LoadGen's offline query holds enough samples to last min_duration at the expected rate (offline_expected_qps).
  const samples = Math.max(s.minSampleCount, residentBatches * batchSize, Math.ceil((expectedSamplesPerS * s.minDurationMs) / 1000));
  const count = Math.ceil(samples / batchSize);
  return { batches: Array.from({ length: count }, (_, i) => i % residentBatches), arrivalsNs: new Array<number>(count).fill(0), concurrency };
}
