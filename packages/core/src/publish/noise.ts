/**
 * The noisy rule, applied once when a Profile is assembled (publish/verdicts.ts); readers read `profile.verdicts`.
 * When a Profile's throughput is too noisy to compare (the site's noisy mark, and `pbh compare`'s caveat): a reader
 * should not weigh a 5% difference between two Profiles whose own figure could move by more than that.
 * - a session shorter than NOISE_MIN_SESSION_MS: timer resolution, scheduler ticks and a single preemption are then
 *   a sizeable share of the session's wall time (25-46 ms sessions gave a 95% CI of 141-37,165 samples/s);
 * - a 95% confidence interval of the mean throughput whose half-width exceeds NOISE_MAX_CI_HALF_WIDTH of the mean
 *   (with three sessions the t quantile is 4.3, so this also catches a few sessions that disagree).
 */
export const NOISE_MIN_SESSION_MS = 100;
export const NOISE_MAX_CI_HALF_WIDTH = 0.1;
// The store's v7 migration judges Profiles stored before it by the same numbers (store/verdict-schema.ts).

export interface NoiseFacts {
  noisy: boolean;
  /** The shortest session in ms where it is under NOISE_MIN_SESSION_MS, else null. */
  shortSessionMs: number | null;
  /** The CI's half-width over the mean where it exceeds NOISE_MAX_CI_HALF_WIDTH, else null. */
  wideCi: number | null;
}

/** From a Profile's session wall times and its throughput CI; a Profile that measured nothing is never noisy. */
export function noiseFacts(sessionWallMs: readonly number[], mean: number | null, low: number | null, high: number | null): NoiseFacts {
  const shortest = sessionWallMs.length > 0 ? Math.min(...sessionWallMs) : null;
  const shortSessionMs = shortest !== null && shortest < NOISE_MIN_SESSION_MS ? shortest : null;
  const half = mean !== null && mean > 0 && low !== null && high !== null ? (high - low) / 2 / mean : null;
  const wideCi = half !== null && half > NOISE_MAX_CI_HALF_WIDTH ? half : null;
  return { noisy: shortSessionMs !== null || wideCi !== null, shortSessionMs, wideCi };
}
