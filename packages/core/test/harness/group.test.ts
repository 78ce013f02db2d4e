import { describe, expect, it } from 'vitest';
import { ProfileSchema, type Profile } from '../../src/contracts/profile.js';
import type { ExperimentInput } from '../../src/config/schema.js';
import { Deadline } from '../../src/harness/deadline.js';
import { runGroup } from '../../src/harness/group.js';
import { pairedRatio } from '../../src/harness/paired.js';
import { seededRandom, shuffled } from '../../src/harness/rounds.js';
import { fakeEngine, type FakeScript } from './fake-engine.js';
import { fakeSweep } from './sweep-context.js';

/** One group: ref and the scripted engines on one model and batch size, run as the sweep runs a group. */
async function group(scripts: Record<string, FakeScript>, overrides: Partial<ExperimentInput> = {}, detect = true) {
  const engines = [fakeEngine('ref', scripts.ref), ...Object.entries(scripts).filter(([n]) => n !== 'ref').map(([n, s]) => fakeEngine(n, s))];
  const { ctx, cells } = await fakeSweep(engines, overrides);
  if (detect) ctx.detectShifts = async (series) => ({ library: 'test', method: 'a break where the test says', series: series.map((s) => ({ id: s.id, breaks: [3], sigma: 1, penalty: 1 })) });
  const profiles = await runGroup(ctx, cells, { deadlineFor: (c) => new Deadline(ctx.loaded.experiment.timeout_s, c.key) });
  await ctx.reference.release();
  const by = (name: string): Profile => profiles.find((p) => p.engine.name === name)!;
  return { profiles, by };
}

describe('interleaved rounds', () => {
  it('runs every contender once a round in a seeded random order, recorded on each Profile', async () => {
    const log: string[] = [];
    const { profiles, by } = await group({ ref: { log }, a: { log, serviceNs: 500 }, b: { log, serviceNs: 2000 } });
    for (const p of profiles) expect(ProfileSchema.safeParse(p).success, p.error ?? '').toBe(true);
    const r = by('a').rounds!;
    expect(r.contenders).toHaveLength(3);
    expect(r.formed).toMatch(/3 contenders .* resident together.*until the resident processes are quiet/);
    // One wait for quiet per session (0 where it followed nothing or its own copy), none of them cut short here.
    for (const p of profiles) expect(p.rounds!.settle_wait_ms).toHaveLength(p.sessions.length);
    expect(r.settle_busy).toBe(0);
    // Constant service times: a zero-width interval after the config's three sessions.
    expect(r.stopped).toBe('interval');
    expect(r.orders).toHaveLength(3);
    for (const order of r.orders) expect([...order].sort()).toEqual([0, 1, 2]);
    expect(by('b').rounds!.orders).toEqual(r.orders);
    expect(by('b').rounds!.seed).toBe(r.seed);
    // The same seed gives the same orders.
    const random = seededRandom(r.seed);
    expect(r.orders).toEqual(r.orders.map(() => shuffled([0, 1, 2], random)));
    // The engines really alternated: more runs of one name than one contender's sessions back to back would make.
    const runs = log.filter((n, i) => i === 0 || log[i - 1] !== n).length;
    expect(runs).toBeGreaterThan(3);
    expect(profiles.every((p) => p.sessions.length === 3)).toBe(true);
  });

  it('gives paired ratios with intervals, and claims the fastest only when the interval leaves out 1', async () => {
    const { by } = await group({ a: { serviceNs: 500 }, b: { serviceNs: 1000 } });
    const a = by('a').rounds!;
    const overB = a.pairs.find((p) => p.other_engine === 'b')!;
    expect(overB).toMatchObject({ ratio: 2, ci95_low: 2, ci95_high: 2, verdict: 'faster', rounds: 3 });
    expect(a.lead).toMatchObject({ claim: 'fastest', ratio: 2 });
    // ref and b serve alike: tied, and neither leads.
    expect(by('b').rounds!.pairs.find((p) => p.other_engine === 'ref')).toMatchObject({ ratio: 1, verdict: 'tied' });
    expect(by('b').rounds!.lead).toBeNull();
  });

  it('says tied when the top two overlap', () => {
    const r = pairedRatio([100, 120, 95, 110], [105, 100, 104, 108])!;
    expect(r.low).toBeLessThan(1);
    expect(r.high).toBeGreaterThan(1);
  });

  it('keeps going past the minimum while the interval is wide, and says so when the budget stops it', async () => {
    // Every other session of `noisy` is 60% slower: its interval never closes to ±5%.
    const noisy: FakeScript = { serviceNsAt: (q) => (Math.floor(q / 9) % 2 === 0 ? 1000 : 1600) };
    const { by } = await group({ noisy }, { rounds: { budget_s: 0.0003 } });
    const r = by('noisy').rounds!;
    expect(r.stopped).toBe('budget');
    expect(r.ci_half_width).toBeGreaterThan(0.05);
    expect(r.spent_s).toBeGreaterThanOrEqual(0.0003);
    expect(by('noisy').sessions.length).toBeGreaterThan(3);
    // ref met its interval after three and sat the later rounds out: they hold the noisy one alone.
    expect(by('ref').sessions).toHaveLength(3);
    expect(by('ref').rounds!.stopped).toBe('interval');
    expect(r.orders.slice(3).every((o) => o.length === 1)).toBe(true);
    expect(r.pairs[0]!.rounds).toBe(3);
  });

  it('stops at max_sessions whatever the interval', async () => {
    const noisy: FakeScript = { serviceNsAt: (q) => (Math.floor(q / 9) % 2 === 0 ? 1000 : 1600) };
    const { by } = await group({ noisy }, { rounds: { max_sessions: 4 } });
    expect(by('noisy').sessions).toHaveLength(4);
    expect(by('noisy').rounds!.stopped).toBe('max_sessions');
  });

  it('reports level shifts from the change-point detector with the levels on each side', async () => {
    const { by } = await group({ a: {} }, { sessions: 6 });
    expect(by('a').rounds!.level_shifts).toEqual([{ session: 3, before: expect.any(Number), after: expect.any(Number), ratio: 1 }]);
  });

  it('a contender that fails mid-rounds becomes its failed Profile, and the others finish without it', async () => {
    // 2 warmup + 8 batches a session: query 25 falls in b's third session.
    const { profiles, by } = await group({ a: { serviceNs: 500 }, b: { failAt: 25 } });
    expect(profiles).toHaveLength(3);
    expect(by('b').status).toBe('failed');
    expect(by('b').error).toMatch(/scripted failure/);
    expect(by('a').status).toBe('ok');
    expect(by('a').sessions).toHaveLength(3);
    expect(by('a').rounds!.contenders).toHaveLength(3);
    expect(by('a').rounds!.pairs.map((p) => p.other_engine)).toEqual(['ref']);
  });

  it('forms banks of max_resident contenders and says so', async () => {
    const { by } = await group({ a: {}, b: {} }, { rounds: { max_resident: 2 } });
    expect(by('ref').rounds!.contenders).toHaveLength(2);
    expect(by('ref').rounds!.formed).toMatch(/bank 1 \(rounds.max_resident is 2\)/);
    expect(by('b').rounds!.formed).toMatch(/alone/);
  });

  it('without a change-point detector the Profile says why no shift was looked for', async () => {
    const { by } = await group({}, { sessions: 2 }, false);
    expect(by('ref').rounds!.level_shifts).toEqual([]);
    expect(by('ref').rounds!.level_shifts_note).toMatch(/2 sessions/);
  });

  it('with rounds.replicas prepares each contender that many times and alternates its sessions among the copies', async () => {
    const a = fakeEngine('a');
    const { ctx, cells } = await fakeSweep([fakeEngine('ref'), a], { sessions: 4, rounds: { replicas: 2 } });
    const profiles = await runGroup(ctx, cells, { deadlineFor: (c) => new Deadline(ctx.loaded.experiment.timeout_s, c.key) });
    await ctx.reference.release();
    const p = profiles.find((x) => x.engine.name === 'a')!;
    expect(ProfileSchema.safeParse(p).success, p.error ?? '').toBe(true);
    expect(a.calls.prepares).toHaveLength(2);
    // Each copy in its own scratch folder, each loaded with the performance set and disposed after.
    expect(new Set(a.calls.prepares.map((r) => r.model.workDir)).size).toBe(2);
    expect(a.calls.disposes).toBe(2);
    expect(p.sessions.map((s) => s.replica)).toEqual([0, 1, 0, 1]);
    expect(p.rounds).toMatchObject({ replicas: 2 });
    expect(p.rounds!.formed).toMatch(/2 prepared copies/);
  });
});
