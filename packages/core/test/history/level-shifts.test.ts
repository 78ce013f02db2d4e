import { describe, expect, it } from 'vitest';
import type { Profile } from '../../src/contracts/profile.js';
import { Deadline } from '../../src/harness/deadline.js';
import { runGroup } from '../../src/harness/group.js';
import { fakeEngine } from '../harness/fake-engine.js';
import { fakeSweep } from '../harness/sweep-context.js';

// The real detector (python/changepoints through the project venv) on a group whose machine slows down mid-run.
describe('level shifts within a group\'s sessions', () => {
  it('finds the session where a contender\'s pace changed, with the levels on each side', async () => {
    // Query 1 is the gate, 2-3 the warmup, then 8 a session: from query 44 (session 5) every query takes 1.5x.
    const slows = fakeEngine('slows', { serviceNsAt: (q) => (q >= 44 ? 1500 : 1000) });
    const { ctx, cells } = await fakeSweep([fakeEngine('ref'), slows], { sessions: 10 });
    const profiles = await runGroup(ctx, cells, { deadlineFor: (c) => new Deadline(ctx.loaded.experiment.timeout_s, c.key) });
    await ctx.reference.release();
    const by = (name: string): Profile => profiles.find((p) => p.engine.name === name)!;
    expect(by('slows').rounds!.level_shifts_note).toMatch(/ruptures/);
    expect(by('slows').rounds!.level_shifts).toEqual([{ session: 5, before: expect.any(Number), after: expect.any(Number), ratio: expect.closeTo(1 / 1.5, 2) }]);
    expect(by('ref').rounds!.level_shifts).toEqual([]);
  });
});
