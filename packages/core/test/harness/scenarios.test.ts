import { describe, expect, it } from 'vitest';
import type { ExperimentInput } from '../../src/config/schema.js';
import { runCell } from '../../src/harness/cell.js';
import { Deadline } from '../../src/harness/deadline.js';
import { earlyStoppingEstimate, minPassingQueries } from '../../src/harness/scenarios/early-stopping.js';
import { fakeEngine, type FakeScript } from './fake-engine.js';
import { fakeSweep } from './sweep-context.js';

async function run(script: FakeScript, overrides: Partial<ExperimentInput>) {
  const engine = fakeEngine('fake', script);
  const { ctx, cells } = await fakeSweep([fakeEngine('ref'), engine], { timeout_s: 120, ...overrides });
  const profile = await runCell(ctx, cells.find((c) => c.engine.name === 'fake')!, new Deadline(120, 'scenario'));
  await ctx.reference.release();
  return profile;
}

describe("LoadGen's early stopping", () => {
  it('needs the query counts LoadGen computes (mlperf.conf: multi-stream 662 = 661 + 1)', () => {
    expect([1, 2, 5, 20].map((t) => minPassingQueries(t, 0.9))).toEqual([63, 79, 122, 305]);
    expect([1, 2, 5, 20].map((t) => minPassingQueries(t, 0.99))).toEqual([661, 836, 1302, 3284]);
  });

  it('estimates no percentile from too few queries, and a conservative one from enough', () => {
    expect(earlyStoppingEstimate(Float64Array.from({ length: 50 }, (_, i) => i), 0.9)).toEqual({ estimate: null, needed: 64 });
    const sorted = Float64Array.from({ length: 1000 }, (_, i) => i);
    const es = earlyStoppingEstimate(sorted, 0.9);
    expect(es.estimate).toBeGreaterThan(900);
    expect(es.estimate).toBeLessThan(950);
  });
});

describe('scenarios on the fake engine', () => {
  it('single stream: every session runs until its minimums, reports p90 and says why it is INVALID', async () => {
    const short = await run({ serviceNs: 1000 }, { scenario: { kind: 'single_stream', min_duration_ms: 0, min_query_count: 100 } });
    expect(short.status, short.error ?? '').toBe('ok');
    expect(short.sessions.every((s) => s.batches === 100)).toBe(true);
    expect(short.scenario).toMatchObject({ kind: 'single_stream', validity: 'VALID', reported: { name: 'p90_latency_ms', value: 0.001 } });
    // The same short run, judged by MLPerf's rules, says what it lacks.
    expect(short.scenario?.mlperf?.validity).toBe('INVALID');
    expect(short.scenario?.mlperf?.reasons.join('\n')).toMatch(/MLPerf's rules need at least 600 s \(min_duration_ms\)/);
    const mlperf = await run({ serviceNs: 1000 }, { mlperf_rules: true, sessions: 1, scenario: { kind: 'single_stream', min_duration_ms: 0 } });
    expect(mlperf.scenario?.validity).toBe('VALID');
    expect(mlperf.scenario?.rules).toBe('mlperf');
    const invalid = await run({ serviceNs: 1000 }, { sessions: 1, scenario: { kind: 'single_stream', min_duration_ms: 0, min_query_count: 8 } });
    expect(invalid.scenario?.validity).toBe('INVALID');
    expect(invalid.scenario?.reasons.join('\n')).toMatch(/every session: early stopping: 8 queries are too few to estimate p90; needs at least 64/);
  });

  it("single stream by PBH's defaults: each session runs early stopping's 64 queries and 200 ms, so it is VALID", async () => {
    // 0.5 ms a query: 200 ms is 400 queries, more than early stopping's count.
    const slow = await run({ serviceNs: 0.5e6 }, { scenario: 'single_stream' });
    expect(slow.status, slow.error ?? '').toBe('ok');
    expect(slow.sessions.every((s) => s.batches >= 400 && s.wall_ns >= 200e6)).toBe(true);
    // 10 ms a query: early stopping's 64 queries outlast 200 ms.
    const slower = await run({ serviceNs: 10e6 }, { scenario: 'single_stream', sessions: 1 });
    expect(slower.sessions.map((s) => s.batches)).toEqual([64]);
    expect(slower.scenario).toMatchObject({ validity: 'VALID', reasons: [] });
  });

  it('multi stream runs samples_per_query as one batch and reports p99', async () => {
    const p = await run({ serviceNs: 2000 }, { scenario: { kind: 'multi_stream', samples_per_query: 4, min_duration_ms: 0, min_query_count: 700 }, sessions: 1 });
    expect(p.status, p.error ?? '').toBe('ok');
    expect(p.workload.batch_size).toBe(4);
    expect(p.scenario).toMatchObject({ kind: 'multi_stream', validity: 'VALID', reported: { name: 'p99_latency_ms', value: 0.002 } });
  });

  it('offline issues every sample at once and reports samples/s', async () => {
    const p = await run({ serviceNs: 0.2e6 }, { scenario: { kind: 'offline', min_duration_ms: 0 }, sessions: 2 });
    expect(p.status, p.error ?? '').toBe('ok');
    expect(p.headline_boundary).toBe('query');
    expect(p.scenario).toMatchObject({ kind: 'offline', executor: 'harness', validity: 'VALID', reported: { name: 'samples_per_s', unit: 'samples/s' } });
    // 8 batches of 8 samples, one after another on one server: at most 64 samples per 8 x 0.2 ms, and the reported
    // figure is the sessions' own samples/s.
    expect(p.scenario!.reported.value).toBeLessThanOrEqual(64 / 0.0016);
    expect(p.scenario!.reported.value).toBeCloseTo(p.throughput!.mean, 6);
  });

  it('server: INVALID past the latency bound, and the peak search keeps every rate it tried', async () => {
    const over = await run({ serviceNs: 1e6 }, { scenario: { kind: 'server', target_qps: 2000, latency_bound_ms: 5, min_duration_ms: 200, min_query_count: 100 }, sessions: 1 });
    expect(over.scenario?.validity).toBe('INVALID');
    expect(over.scenario?.reasons.join('\n')).toMatch(/p99 latency .* exceeds the latency bound 5 ms at 2000 queries\/s: lower target_qps/);
    const peak = await run({ serviceNs: 1e6 }, { scenario: { kind: 'server', target_qps: 400, latency_bound_ms: 50, min_duration_ms: 0, min_query_count: 1, find_peak: true }, sessions: 1 });
    const tries = peak.scenario!.peak_search;
    expect(tries.length).toBeGreaterThan(2);
    expect(tries.length).toBeLessThanOrEqual(12);
    expect(tries.some((t) => t.validity === 'VALID') && tries.some((t) => t.validity === 'INVALID')).toBe(true);
    const best = Math.max(...tries.filter((t) => t.validity === 'VALID').map((t) => t.target_qps));
    // One 1 ms server serves 1000 queries/s; a short run can stay within 50 ms a little past that, not far.
    expect(best).toBeLessThan(1250);
    expect(peak.scenario!.settings.targetQps).toBe(best);
  });
});
