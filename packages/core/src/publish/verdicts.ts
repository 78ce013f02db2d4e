import type { Profile, Verdicts } from '../contracts/profile.js';
import { noiseFacts } from './noise.js';

/**
 * The Profile's verdicts, judged once when it is assembled and stored with it: LoadGen's and MLPerf's validity, the
 * noisy rule (publish/noise.ts) and the busy mark (system/interference.ts). Readers read these fields, never the rules.
 */
export function profileVerdicts(p: Pick<Profile, 'scenario' | 'sessions' | 'throughput' | 'interference'>): Verdicts {
  const t = p.throughput;
  const noise = noiseFacts(
    p.sessions.map((s) => s.wall_ns / 1e6),
    t?.mean ?? null,
    t?.ci95_low ?? null,
    t?.ci95_high ?? null,
  );
  const half = t && t.mean > 0 ? (t.ci95_high - t.ci95_low) / 2 / t.mean : null;
  return {
    validity: p.scenario?.validity ?? null,
    mlperf_validity: p.scenario?.mlperf?.validity ?? null,
    noisy: noise.noisy,
    short_session_ms: noise.shortSessionMs,
    ci_half_width: half,
    busy: p.interference?.busy ?? null,
  };
}
