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

/** Poisson arrivals at `qps`: exponential gaps with mean 1/qps, from `seed` (LoadGen's schedule_rng_seed role). */
export function poissonArrivalsNs(count: number, qps: number, seed: number): number[] {
  const rand = mulberry32(seed);
  const out = new Array<number>(count);
  let t = 0;
  for (let i = 0; i < count; i++) {
    t += (-Math.log(1 - rand()) / qps) * 1e9;
    out[i] = t;
  }
  return out;
}

/**
 * The queries of one scenario run over K resident batches, cycling through them:
 * server — max(min_query_count, target_qps x min_duration, early stopping's minimum) one-batch queries at Poisson
 *   arrivals;
 * offline — every sample at once (at least min_sample_count), as batches all due at 0.
 * Single and multi stream are closed loops: the session loop runs them.
 */
export function openSchedule(s: ScenarioSettings, residentBatches: number, batchSize: number, concurrency: number, seed: number): QuerySchedule {
  if (s.kind === 'server') {
    // At least as many queries as early stopping needs to pass with none over the bound: fewer can never be VALID.
    const count = Math.max(s.minQueryCount, Math.ceil((s.targetQps * s.minDurationMs) / 1000), minPassingQueries(0, s.percentile));
    return { batches: Array.from({ length: count }, (_, i) => i % residentBatches), arrivalsNs: poissonArrivalsNs(count, s.targetQps, seed), concurrency };
  }
  const samples = Math.max(s.minSampleCount, residentBatches * batchSize);
  const count = Math.ceil(samples / batchSize);
  return { batches: Array.from({ length: count }, (_, i) => i % residentBatches), arrivalsNs: new Array<number>(count).fill(0), concurrency };
}
