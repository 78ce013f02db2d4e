import type { PairRatio, Profile, Rounds } from '../contracts/profile.js';
import { studentTQuantile } from '../stats/student-t.js';

/**
 * Ratios between contenders of one group from their paired rounds: round r's throughput of A over B's in the same
 * round, so what the machine did in that round cancels; the geometric mean of those ratios with a 95% Student-t
 * interval on their logs. "faster" or "slower" only when the interval leaves out 1, otherwise the two are tied here.
 */
export function pairedRatio(a: readonly number[], b: readonly number[]): { ratio: number; low: number; high: number; rounds: number } | null {
  const n = Math.min(a.length, b.length);
  const logs: number[] = [];
  for (let r = 0; r < n; r++) if (a[r]! > 0 && b[r]! > 0) logs.push(Math.log(a[r]! / b[r]!));
  if (logs.length < 2) return null;
  const mean = logs.reduce((x, v) => x + v, 0) / logs.length;
  const variance = logs.reduce((x, v) => x + (v - mean) ** 2, 0) / (logs.length - 1);
  const half = studentTQuantile(0.975, logs.length - 1) * Math.sqrt(variance / logs.length);
  return { ratio: Math.exp(mean), low: Math.exp(mean - half), high: Math.exp(mean + half), rounds: logs.length };
}

const entry = (p: Profile): string => p.engine.label ?? p.engine.name;
const throughputs = (p: Profile): number[] => p.sessions.map((s) => s.throughput_sps);

/** Every ok contender against every other ok one of its bank, from the rounds both ran. */
export function pairsOf(p: Profile, bank: readonly Profile[]): PairRatio[] {
  if (p.status !== 'ok') return [];
  return bank.flatMap((q) => {
    if (q === p || q.status !== 'ok') return [];
    const r = pairedRatio(throughputs(p), throughputs(q));
    if (!r) return [];
    const verdict = r.low > 1 ? 'faster' : r.high < 1 ? 'slower' : 'tied';
    return [{ other_profile_id: q.profile_id, other_cell_key: q.cell_key, other_engine: entry(q), other_precision: q.engine.precision?.executed ?? null, ratio: r.ratio, ci95_low: r.low, ci95_high: r.high, rounds: r.rounds, verdict }];
  });
}

/**
 * The lead among the bank's ok contenders of one executed precision (the leaderboard ranks within a precision): the top
 * mean throughput is 'fastest' only when its paired interval against the runner-up leaves out 1, else 'tied'.
 */
export function leadOf(p: Profile, bank: readonly Profile[], pairs: readonly PairRatio[]): Rounds['lead'] {
  const precision = p.engine.precision?.executed ?? null;
  const peers = bank.filter((q) => q.status === 'ok' && q.throughput && (q.engine.precision?.executed ?? null) === precision);
  if (p.status !== 'ok' || peers.length < 2) return null;
  const ranked = [...peers].sort((x, y) => y.throughput!.mean - x.throughput!.mean);
  if (ranked[0] !== p) return null;
  const pair = pairs.find((x) => x.other_profile_id === ranked[1]!.profile_id);
  if (!pair) return null;
  return { claim: pair.ci95_low > 1 ? 'fastest' : 'tied', runner_up: entry(ranked[1]!), ratio: pair.ratio, ci95_low: pair.ci95_low, ci95_high: pair.ci95_high };
}
