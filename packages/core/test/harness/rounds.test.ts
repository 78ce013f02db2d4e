import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { RoundsSchema } from '../../src/config/schema.js';
import type { SessionResult } from '../../src/contracts/profile.js';
import { runRounds, type RoundMember } from '../../src/harness/rounds.js';

/** A member whose sessions take no time and log when they start and end; with `copies`, they alternate among copies. */
function member(name: string, log: { name: string; start: number; end: number }[], copies = 1): RoundMember {
  const sessions: SessionResult[] = [];
  return {
    sessions: () => sessions,
    ...(copies > 1 ? { copy: () => sessions.length % copies } : {}),
    alive: () => true,
    secondsLeft: () => 60,
    session: async () => {
      const start = performance.now();
      sessions.push({ index: sessions.length, batches: 1, samples: 1, wall_ns: 1e6, throughput_sps: 1000, latency: {}, metrics: {} });
      log.push({ name, start, end: performance.now() });
      return true;
    },
  };
}

describe('runRounds settle', () => {
  it('leaves settle_ms idle before a session that follows another contender\'s', async () => {
    const log: { name: string; start: number; end: number }[] = [];
    const cfg = RoundsSchema.parse({ settle_ms: 30 });
    await runRounds([member('a', log), member('b', log)], 3, cfg, 7);
    expect(log).toHaveLength(6);
    const switches = log.slice(1).filter((s, i) => s.name !== log[i]!.name);
    expect(switches.length).toBeGreaterThan(0);
    // setTimeout may fire up to a ms early by its rounding; never much less than asked.
    for (const [i, s] of log.entries()) if (i > 0 && s.name !== log[i - 1]!.name) expect(s.start - log[i - 1]!.end).toBeGreaterThanOrEqual(29);
  });

  it('leaves settle_ms idle between two sessions of one contender that run on different copies', async () => {
    const log: { name: string; start: number; end: number }[] = [];
    // One member alone: every session follows its own previous one, each on the other of its two copies.
    await runRounds([member('a', log, 2)], 4, RoundsSchema.parse({ settle_ms: 30 }), 7);
    expect(log).toHaveLength(4);
    for (const [i, s] of log.entries()) if (i > 0) expect(s.start - log[i - 1]!.end).toBeGreaterThanOrEqual(29);
  });

  it('records each session\'s wait for quiet beyond settle_ms, and the sessions that began still busy', async () => {
    const log: { name: string; start: number; end: number }[] = [];
    let calls = 0;
    const settle = async () => ({ waitedMs: 12.5, quiet: ++calls % 2 === 1 });
    const outcome = await runRounds([member('a', log), member('b', log)], 3, RoundsSchema.parse({ settle_ms: 5 }), 7, undefined, settle);
    const waits = outcome.settleWaitMs.flat();
    expect(waits).toHaveLength(6);
    // The first session follows nothing; every later one follows the other contender's or sits after its own.
    expect(waits.filter((w) => w === 12.5)).toHaveLength(calls);
    expect(outcome.settleBusy[0]! + outcome.settleBusy[1]!).toBe(Math.floor(calls / 2));
  });

  it('runs sessions back to back with settle_ms 0', async () => {
    const log: { name: string; start: number; end: number }[] = [];
    const outcome = await runRounds([member('a', log), member('b', log)], 2, RoundsSchema.parse({ settle_ms: 0 }), 7);
    expect(outcome.orders).toHaveLength(2);
    expect(log).toHaveLength(4);
  });
});
