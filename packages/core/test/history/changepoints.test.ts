import { describe, expect, it } from 'vitest';
import { detectChanges, type SeriesInput, type ThroughputChange } from '../../src/history/index.js';
import { meanOf, rng, synthetic, type Step } from './synthetic.js';

/** Steps of 3 to 6 session sigmas, 1 to 4 a series, at least 5 points apart, up or down: seeded, so fixed. */
function steppedCases(count: number): { id: string; steps: Step[]; points: number[][] }[] {
  return Array.from({ length: count }, (_, k) => {
    const next = rng(7000 + k);
    const slots = [5, 11, 17, 23, 29, 35, 41, 46].filter(() => next() < 0.45).slice(0, 4);
    const at = slots.length > 0 ? slots : [25];
    const steps = at.map((position) => ({ at: position, sigmas: (3 + 3 * next()) * (next() < 0.5 ? -1 : 1) }));
    return { id: `stepped-${k}`, steps, points: synthetic(100 + k, 50, steps) };
  });
}

const asInput = (id: string, points: number[][]): SeriesInput => ({
  id,
  points: points.map((sessions) => ({ status: 'ok', throughput: meanOf(sessions), sessions })),
});

describe('change points over a seeded synthetic history (ruptures PELT from the venv)', () => {
  it('finds every step of 3x the session noise or more within one point, and none on flat series of 50 points', async () => {
    const stepped = steppedCases(40);
    const flat = Array.from({ length: 40 }, (_, k) => ({ id: `flat-${k}`, points: synthetic(500 + k, 50, []) }));
    const detection = await detectChanges([...stepped.map((c) => asInput(c.id, c.points)), ...flat.map((c) => asInput(c.id, c.points))]);
    expect(detection.method).toMatch(/^ruptures \d+\.\d+\.\d+, PELT/);

    let planted = 0;
    let found = 0;
    let extra = 0;
    for (const c of stepped) {
      const changes = detection.series.get(c.id)!.changes.filter((x): x is ThroughputChange => x.kind === 'throughput');
      for (const step of c.steps) {
        planted++;
        const hit = changes.find((x) => Math.abs(x.index - step.at) <= 1);
        expect(hit, `${c.id}: step of ${step.sigmas.toFixed(1)} sigma at point ${step.at} (found ${changes.map((x) => x.index).join(', ')})`).toBeDefined();
        // The direction and the interval follow the step: a planted rise reads faster, and its interval leaves out 1.
        expect(hit!.direction).toBe(step.sigmas > 0 ? 'faster' : 'slower');
        expect(step.sigmas > 0 ? hit!.low > 1 : hit!.high < 1).toBe(true);
        expect(hit!.p).toBeLessThan(0.01);
        found++;
      }
      extra += changes.filter((x) => !c.steps.some((s) => Math.abs(x.index - s.at) <= 1)).length;
    }
    const flatSteps = flat.flatMap((c) => detection.series.get(c.id)!.changes);
    console.log(`change points: ${found}/${planted} planted steps found within one point, ${extra} extra on stepped series, ${flatSteps.length} on ${flat.length} flat series`);
    expect(found).toBe(planted);
    expect(flatSteps).toEqual([]);
    expect(extra).toBe(0);
  });

  it('measures a step against the level before it: ratio, interval and where', async () => {
    const points = synthetic(42, 30, [{ at: 18, sigmas: -8 }]);
    const { series } = await detectChanges([asInput('one', points)]);
    const [change] = series.get('one')!.changes;
    expect(change).toMatchObject({ kind: 'throughput', index: 18, previous: 17, direction: 'slower' });
    const step = change as ThroughputChange;
    const before = meanOf(points.slice(0, 18).map(meanOf));
    const after = meanOf(points.slice(18).map(meanOf));
    expect(step.before).toMatchObject({ from: 0, to: 17, points: 18 });
    expect(step.after).toMatchObject({ from: 18, to: 29, points: 12 });
    expect(step.ratio).toBeCloseTo(after / before, 12);
    // 8 sigma of 20 on 1000: 16% slower.
    expect(step.ratio).toBeGreaterThan(0.8);
    expect(step.ratio).toBeLessThan(0.88);
    expect(step.low).toBeLessThan(step.ratio);
    expect(step.high).toBeGreaterThan(step.ratio);
  });

  it('counts ok -> failed and back as change points, and steps over the ok points only', async () => {
    const ok = synthetic(9, 12, []);
    const statuses = ['ok', 'ok', 'ok', 'failed', 'timeout', 'ok', 'ok', 'ok', 'invalid_output', 'ok', 'ok', 'ok'] as const;
    const input: SeriesInput = {
      id: 's',
      points: statuses.map((status, i) => (status === 'ok' ? { status, throughput: meanOf(ok[i]!), sessions: ok[i]! } : { status, throughput: null, sessions: [] })),
    };
    const { series } = await detectChanges([input]);
    expect(series.get('s')!.changes).toEqual([
      { kind: 'status', index: 3, previous: 2, from: 'ok', to: 'failed' },
      { kind: 'status', index: 5, previous: 4, from: 'timeout', to: 'ok' },
      { kind: 'status', index: 8, previous: 7, from: 'ok', to: 'invalid_output' },
      { kind: 'status', index: 9, previous: 8, from: 'invalid_output', to: 'ok' },
    ]);
  });

  it('leaves a series of one or three points alone', async () => {
    const { series } = await detectChanges([asInput('one', synthetic(1, 1, [])), asInput('three', synthetic(2, 3, [{ at: 2, sigmas: 50 }]))]);
    expect(series.get('one')!.changes).toEqual([]);
    // Two points a level at least: a jump at the last point waits for a second point after it (pbh compare sees it now).
    expect(series.get('three')!.changes).toEqual([]);
  });
});
