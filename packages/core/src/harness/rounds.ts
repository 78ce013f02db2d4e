import { setTimeout as sleep } from 'node:timers/promises';
import type { RoundsConfig } from '../config/schema.js';
import type { Rounds, SessionResult } from '../contracts/profile.js';
import { summarize } from '../stats/summary.js';
import type { QuietWait } from '../system/quiet.js';

/**
 * Randomized multiple interleaved trials (Abedi and Brecht, ICPE 2017; asv's --interleave-processes): the contenders
 * of a group run one session each a round, in a fresh random order each round from a seeded generator, so a change
 * in the machine (another tenant, a frequency step) falls on every contender alike instead of on whichever cell ran
 * then. Rounds go on until every contender's 95% interval of throughput is within ±target_ci of its mean, or its
 * budget of timed session seconds is spent (Kalibera and Jones 2013: the repetitions are sized from the variance seen).
 */

/** mulberry32: a small seeded generator, the same orders for the same seed on every platform. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates over `items` with `random`. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Half-width of the 95% Student-t interval of the mean throughput over its mean; null with fewer than two sessions. */
export function ciHalfWidth(sessions: readonly SessionResult[]): number | null {
  if (sessions.length < 2) return null;
  const t = summarize(sessions.map((s) => s.throughput_sps));
  return t.mean > 0 ? (t.ci95_high - t.ci95_low) / 2 / t.mean : null;
}

/** What the rounds need of a contender: its sessions so far, whether it is still running, one more session. */
export interface RoundMember {
  sessions(): readonly SessionResult[];
  /** The prepared copy (rounds.replicas) its next session runs on: each copy is a process of its own, or a runtime
   * session with its own thread pools. Absent: one copy. */
  copy?(): number;
  alive(): boolean;
  /** Runs one session; false when it failed (the member is then no longer alive). */
  session(): Promise<boolean>;
  /** Seconds before its deadline keeps the rest for finishing (the accuracy pass, the probes); none left: no more rounds. */
  secondsLeft(): number;
}

/** The pause before a session that follows another copy's: settle_ms idle, and (group.ts) a wait for quiet. */
export type Settle = () => Promise<QuietWait>;

export interface RoundsOutcome {
  /** Each round's order, indices into the members. */
  orders: number[][];
  /** Per member, per session: ms idle before it beyond settle_ms, waiting for the resident processes to go quiet. */
  settleWaitMs: number[][];
  /** Per member: sessions that began with the resident processes still busy at settle_max_ms. */
  settleBusy: number[];
  /** Per member: why its rounds ended, and its interval then. */
  stopped: Rounds['stopped'][];
  ciHalfWidth: (number | null)[];
  spentS: number[];
}

const spent = (sessions: readonly SessionResult[]): number => sessions.reduce((a, s) => a + s.wall_ns, 0) / 1e9;

/**
 * Runs rounds over `members` until each alive member's interval is within the target (after `minSessions`), its
 * budget is spent, or `max_sessions` is reached. A round holds every member that still needs (and may afford) another
 * session, in a fresh random order; one that is done sits the later rounds out, so paired ratios use the rounds both
 * ran (the first ones, index for index) and the group costs what its noisiest contender needs, not that times all.
 */
export async function runRounds(
  members: readonly RoundMember[],
  minSessions: number,
  cfg: RoundsConfig,
  seed: number,
  onRound?: (round: number) => void,
  settle: Settle = () => sleep(cfg.settle_ms).then(() => ({ waitedMs: 0, quiet: true })),
): Promise<RoundsOutcome> {
  const random = seededRandom(seed);
  const orders: number[][] = [];
  const settleWaitMs: number[][] = members.map(() => []);
  const settleBusy = members.map(() => 0);
  let last: string | undefined;
  const wants = (m: RoundMember): boolean => {
    const n = m.sessions().length;
    if (n < minSessions) return true;
    if (n >= cfg.max_sessions) return false;
    const half = ciHalfWidth(m.sessions());
    // One session (sessions: 1) has no interval to stop by: it stands as the config asked.
    if (half === null) return false;
    return half > cfg.target_ci && spent(m.sessions()) < cfg.budget_s && m.secondsLeft() > 0;
  };
  for (let round = 0; ; round++) {
    const active = members.flatMap((m, i) => (m.alive() && wants(m) ? [i] : []));
    if (active.length === 0) break;
    onRound?.(round);
    const order = shuffled(active, random);
    orders.push(order);
    for (const i of order) {
      // The thread pools of the copy that ran last may still spin on the cores after its session: let them sleep
      // before another copy (another contender's, or this one's next replica) is timed (docs/measurements.md).
      const runner = `${i}/${members[i]!.copy?.() ?? 0}`;
      const waited = last !== undefined && last !== runner && cfg.settle_ms > 0 ? await settle() : { waitedMs: 0, quiet: true };
      settleWaitMs[i]!.push(Math.round(waited.waitedMs * 10) / 10);
      if (!waited.quiet) settleBusy[i]!++;
      last = runner;
      await members[i]!.session();
    }
  }
  const stopped = members.map((m): Rounds['stopped'] => {
    const half = ciHalfWidth(m.sessions());
    if (half === null) return 'fixed';
    if (half <= cfg.target_ci) return 'interval';
    if (m.sessions().length >= cfg.max_sessions) return 'max_sessions';
    return 'budget';
  });
  return { orders, settleWaitMs, settleBusy, stopped, ciHalfWidth: members.map((m) => ciHalfWidth(m.sessions())), spentS: members.map((m) => spent(m.sessions())) };
}
