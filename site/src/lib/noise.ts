import { NOISE_MAX_CI_HALF_WIDTH, NOISE_MIN_SESSION_MS, type PublishedProfile } from '@pbh/core';
import { fmtNum, fmtPct } from './format.js';

/**
 * When a Profile's throughput is too noisy to compare: a reader should not weigh a 5% difference between two
 * Profiles whose own figure could move by more than that. Two rules, either one marks it:
 * - a session shorter than MIN_SESSION_MS: timer resolution, scheduler ticks and a single preemption are then a
 *   sizeable share of the session's wall time (25-46 ms sessions gave a 95% CI of 141-37,165 samples/s);
 * - a 95% confidence interval of the mean throughput whose half-width exceeds MAX_CI_HALF_WIDTH of the mean (with
 *   three sessions the t quantile is 4.3, so this also catches a few sessions that disagree).
 */
// Core holds the numbers (packages/core/src/publish/noise.ts) so `pbh compare` marks the same Profiles as noisy.
export const MIN_SESSION_MS = NOISE_MIN_SESSION_MS;
export const MAX_CI_HALF_WIDTH = NOISE_MAX_CI_HALF_WIDTH;

/** The rule in words, for page notes and the mark's tooltip. */
export const NOISE_RULE =
  `noisy: a timed session shorter than ${MIN_SESSION_MS} ms, or a 95% confidence interval of the mean throughput ` +
  `wider than ±${fmtPct(MAX_CI_HALF_WIDTH, 0)} of the mean. Fix: more samples per session (the dataset's limit) or more sessions.`;

export interface Noise {
  noisy: boolean;
  /** Why, one sentence a rule: empty when the Profile is not noisy. */
  reasons: string[];
  /** The same in a few words, for a table cell's tooltip (a thousand rows a page: bytes count). */
  brief: string;
}

type NoiseInput = Pick<PublishedProfile, 'throughput_mean' | 'throughput_ci95_low' | 'throughput_ci95_high'> & {
  profile: Pick<PublishedProfile['profile'], 'sessions' | 'verdicts'>;
};

/** The verdict stored with the Profile (judged once at assembly, core's publish/verdicts.ts), put in words. */
export function noiseOf(p: NoiseInput): Noise {
  const v = p.profile.verdicts;
  if (!v?.noisy) return { noisy: false, reasons: [], brief: '' };
  const reasons: string[] = [];
  const brief: string[] = [];
  if (v.short_session_ms !== null) {
    const walls = p.profile.sessions.map((s) => s.wall_ns / 1e6);
    const longest = Math.max(v.short_session_ms, ...walls);
    const shortest = v.short_session_ms;
    const span = walls.length <= 1 || fmtNum(shortest) === fmtNum(longest) ? `${fmtNum(shortest)} ms` : `${fmtNum(shortest)}–${fmtNum(longest)} ms`;
    reasons.push(`sessions of ${span}, under ${MIN_SESSION_MS} ms: timer and scheduler jitter are a large share of each`);
    brief.push(`sessions ${span} < ${MIN_SESSION_MS} ms`);
  }
  const { throughput_ci95_low: low, throughput_ci95_high: high } = p;
  const half = v.ci_half_width;
  if (half !== null && half > MAX_CI_HALF_WIDTH && low !== null && high !== null) {
    reasons.push(`95% CI ${fmtNum(low)}–${fmtNum(high)} samples/s is ±${fmtPct(half, 0)} of the mean, wider than ±${fmtPct(MAX_CI_HALF_WIDTH, 0)}`);
    brief.push(`95% CI ±${fmtPct(half, 0)} > ±${fmtPct(MAX_CI_HALF_WIDTH, 0)}`);
  }
  return { noisy: true, reasons, brief: brief.join('; ') };
}

/** The tooltip of a noisy mark: every reason, then the rule and its fix. */
export function noiseTitle(noise: Noise): string {
  return [...noise.reasons.map((r) => `• ${r}`), NOISE_RULE].join('\n');
}
