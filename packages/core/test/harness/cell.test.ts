import { describe, expect, it } from 'vitest';
import type { Metric } from '../../src/contracts/metric.js';
import type { Scorer } from '../../src/contracts/scorer.js';
import { ProfileSchema } from '../../src/contracts/profile.js';
import { runCell } from '../../src/harness/cell.js';
import { Deadline } from '../../src/harness/deadline.js';
import { fakeEngine, type FakeScript } from './fake-engine.js';
import { fakeSweep } from './sweep-context.js';
import type { ExperimentInput } from '../../src/config/schema.js';

const SAMPLES = 64;
const B = 8;
const BATCHES = SAMPLES / B;
const SESSIONS = 3;
const WARMUP = 2;

/** Runs the single cell of `engine` (index 1 of [ref, engine]) in a fake sweep. */
async function run(script: FakeScript, overrides: Partial<ExperimentInput> = {}, metrics: Metric[] = [], onDeadline?: (d: Deadline) => void) {
  const ref = fakeEngine('ref');
  const engine = fakeEngine('fake', script);
  const { ctx, cells } = await fakeSweep([ref, engine], overrides, metrics);
  const cell = cells.find((c) => c.engine.name === 'fake')!;
  const deadline = new Deadline(ctx.loaded.experiment.timeout_s, 'test cell');
  onDeadline?.(deadline);
  const profile = await runCell(ctx, cell, deadline);
  await ctx.reference.release();
  return { profile, engine, ref };
}

describe('runCell on a fake engine', () => {
  /** The transport probe after the sessions: every resident batch once, and at least 32 queries (loop.ts). */
  const PROBE = 32;

  it('loads the performance set, warms up, runs every session in the system under test and scores every sample', async () => {
    const { profile, engine } = await run({ serviceNs: 2000 });
    expect(profile.status, profile.error ?? '').toBe('ok');
    expect(engine.calls.loaded).toHaveLength(1);
    expect(engine.calls.loaded[0]).toHaveLength(BATCHES);
    // Warmup is one short closed-loop session, then one per tracked session; the set is unloaded before scoring.
    expect(engine.calls.closedLoops).toBe(1 + SESSIONS);
    expect(engine.calls.unloads).toBe(1);
    // The gate, the warmup queries, every batch of every session, the transport probe, then the accuracy pass.
    expect(engine.calls.queries).toBe(1 + WARMUP + SESSIONS * BATCHES + PROBE + BATCHES);
    expect(engine.calls.infers).toBe(1 + BATCHES);
    expect(profile.sessions).toHaveLength(SESSIONS);
    expect(profile.samples.filter((s) => s.boundary === 'engine')).toHaveLength(SESSIONS * BATCHES);
    expect(profile.samples.filter((s) => s.boundary === 'engine').every((s) => s.ns === 2000)).toBe(true);
    // The headline is the engine's own time: throughput = samples / summed engine time.
    expect(profile.headline_boundary).toBe('engine');
    expect(profile.engine.binding).toBe('fake');
    expect(profile.sessions[0]!.throughput_sps).toBeCloseTo((BATCHES * B * 1e9) / (BATCHES * 2000), 6);
    expect(profile.workload.samples_scored).toBe(SAMPLES);
    expect(profile.workload.last_batch).toBe('none');
    expect(profile.scores.find((s) => s.metric === 'top1')?.samples).toBe(SAMPLES);
    expect(profile.correctness?.passed).toBe(true);
    expect(profile.correctness?.precision).toBe('fp32');
    expect(engine.calls.disposes).toBe(1);
    expect(ProfileSchema.safeParse(profile).success).toBe(true);
  });

  it('probes the transport per batch after the sessions, outside the tracker, as a diagnostic', async () => {
    const { profile, engine } = await run({ serviceNs: 3000 });
    expect(profile.status, profile.error ?? '').toBe('ok');
    expect(engine.calls.issues).toBe(PROBE);
    const probe = profile.samples.filter((s) => s.session === -2);
    expect(new Set(probe.map((s) => s.boundary))).toEqual(new Set(['predict', 'transport', 'end_to_end']));
    expect(profile.latency.transport!.n).toBe(PROBE);
    // In process on the fake clock the harness's call is the engine's: nothing else moves the clock.
    expect(profile.latency.predict!.p50).toBe(3000);
    expect(profile.latency.transport!.max).toBe(0);
    expect(profile.latency.end_to_end!.p50).toBeGreaterThanOrEqual(3000);
  });

  it('stops a slow transport probe after every batch once the probe has taken half a second', async () => {
    const { profile, engine } = await run({ serviceNs: 100e6 });
    expect(profile.status, profile.error ?? '').toBe('ok');
    // All 8 batches (0.8 s on the fake clock, past the budget) and no more.
    expect(engine.calls.issues).toBe(BATCHES);
    expect(profile.latency.transport!.n).toBe(BATCHES);
  });

  it('records interference per session from /proc and marks the Profile busy or not', async () => {
    const { profile } = await run({});
    expect(profile.interference).not.toBeNull();
    expect(profile.interference!.sessions).toHaveLength(SESSIONS);
    expect(profile.interference!.other_cpu_share).toBeGreaterThanOrEqual(0);
    expect(profile.interference!.busy).toBe(profile.interference!.other_cpu_share + profile.interference!.steal_share >= profile.interference!.threshold);
  });

  it('times a bounded performance set but scores every sample, whatever the batch size', async () => {
    const perf = await run({}, { performance_samples: 16 });
    expect(perf.profile.workload.samples_per_session).toBe(16);
    expect(perf.profile.samples.filter((s) => s.boundary === 'engine' && s.session === 0)).toHaveLength(2);
    expect(perf.profile.workload.samples_scored).toBe(SAMPLES);
    const top1 = new Map<number, number>();
    for (const [batch, script] of [[1, {}], [7, {}], [7, { acceptsSmallerBatch: true }], [64, {}]] as const) {
      const { profile, engine } = await run(script, { batch_sizes: [batch] });
      expect(profile.status, profile.error ?? '').toBe('ok');
      expect(profile.workload.samples_scored).toBe(SAMPLES);
      expect(profile.scores.find((s) => s.metric === 'top1')!.samples).toBe(SAMPLES);
      top1.set(batch, profile.scores.find((s) => s.metric === 'top1')!.value);
      if (batch === 7) {
        // 64 = 9 x 7 + 1: the last batch runs at its own size, or padded to 7 with the padded rows discarded.
        expect(profile.workload.last_batch).toBe('acceptsSmallerBatch' in script ? 'dynamic' : 'padded');
        expect(engine.calls.rows.at(-1)).toBe('acceptsSmallerBatch' in script ? 1 : 7);
      }
    }
    expect(new Set(top1.values()).size).toBe(1);
  });

  it('does not gate the reference engine against itself', async () => {
    const ref = fakeEngine('ref');
    const { ctx, cells } = await fakeSweep([ref]);
    const profile = await runCell(ctx, cells[0]!, new Deadline(30, 'ref cell'));
    expect(profile.status).toBe('ok');
    expect(profile.correctness).toBeNull();
    expect(ref.calls.queries).toBe(WARMUP + SESSIONS * BATCHES + PROBE + BATCHES);
  });

  it('stores a wrong answer as invalid_output and times nothing', async () => {
    const { profile, engine } = await run({ offset: 1 });
    expect(profile.status).toBe('invalid_output');
    expect(profile.correctness?.passed).toBe(false);
    expect(profile.correctness?.max_abs_error).toBeCloseTo(1, 5);
    expect(profile.sessions).toHaveLength(0);
    expect(engine.calls.queries).toBe(1);
    expect(profile.correctness?.outputs).toEqual([expect.objectContaining({ name: 'logits', passed: false })]);
    expect(profile.error).toMatch(/differ from ref/);
  });

  it('fails the gate on non-finite outputs with a readable reason, and the Profile still validates', async () => {
    const { profile } = await run({ offset: NaN });
    expect(profile.status).toBe('invalid_output');
    expect(profile.error).toMatch(/output "logits" has 80 non-finite values \(NaN or ±Inf\)/);
    expect(ProfileSchema.safeParse(profile).success).toBe(true);
  });

  it('counts non-finite outputs and scores their rows as wrong', async () => {
    const ref = fakeEngine('ref', { offset: NaN });
    const { ctx, cells } = await fakeSweep([ref]);
    const profile = await runCell(ctx, cells[0]!, new Deadline(30, 'nan ref'));
    expect(profile.status, profile.error ?? '').toBe('ok');
    expect(profile.scores.find((s) => s.metric === 'top1')?.value).toBe(0);
    expect(profile.scores.find((s) => s.metric === 'nonfinite_outputs')).toMatchObject({ value: SAMPLES * 10, samples: SAMPLES });
    expect(ProfileSchema.safeParse(profile).success).toBe(true);
  });

  it('refuses top-k with k at least the number of classes before compiling anything', async () => {
    const { profile, engine } = await run({}, { scorers: ['top10'] });
    expect(profile.status).toBe('failed');
    expect(profile.error).toMatch(/scorers\[0\]: top10 on model "digits_gemm" output "logits" of 10 classes is always right; use a k below 10/);
    expect(engine.calls.prepares).toHaveLength(0);
  });

  it('records a compile failure as failed, with nothing to dispose', async () => {
    const { profile, engine } = await run({ failAt: 'prepare' });
    expect(profile.status).toBe('failed');
    expect(profile.error).toMatch(/scripted compile failure/);
    expect(engine.calls.disposes).toBe(0);
  });

  it('records a failure mid-session as failed and disposes the model', async () => {
    const { profile, engine } = await run({ failAt: 1 + WARMUP + 5 }); // inside session 1
    expect(profile.status).toBe('failed');
    expect(profile.error).toMatch(/scripted failure at query 8/);
    expect(engine.calls.disposes).toBe(1);
  });

  it('turns a hang in a session or in prepare into a timeout Profile', async () => {
    const inPredict = await run({ hangAt: 1 + WARMUP + 3 }, { timeout_s: 0.3 });
    expect(inPredict.profile.status).toBe('timeout');
    expect(inPredict.profile.error).toMatch(/timeout of 0.3 s/);
    expect(inPredict.engine.calls.disposes).toBe(1);
    const inPrepare = await run({ hangAt: 'prepare' }, { timeout_s: 0.3 });
    expect(inPrepare.profile.status).toBe('timeout');
  });

  it('records the cell in flight as failed when the user interrupts', async () => {
    const { profile } = await run({ hangAt: 4 }, {}, [], (d) => setTimeout(() => d.interrupt(), 100));
    expect(profile.status).toBe('failed');
    expect(profile.error).toMatch(/interrupted by the user.*the sweep stopped here/);
  });

  it('skips an unavailable engine with its fix', async () => {
    const { profile } = await run({ available: false });
    expect(profile.status).toBe('skipped');
    expect(profile.error).toMatch(/scripted unavailable. Fix: nothing to fix/);
  });

  it('refuses a precision the engine cannot execute, naming the entry and what it supports', async () => {
    const { profile, engine } = await run({}, { engines: [{ name: 'ref' }, { name: 'fake', precision: 'bf16', label: 'fake-bf16' }] });
    expect(profile.status).toBe('failed');
    expect(profile.error).toMatch(/engines\[fake-bf16\]\.precision: fake cannot execute bf16; it supports fp32/);
    expect(engine.calls.prepares).toHaveLength(0);
  });

  it('gates a bf16 cell with a tolerance that follows the executed precision', async () => {
    const bf16 = { engines: [{ name: 'ref' }, { name: 'fake', precision: 'bf16' as const }] };
    const small = await run({ precisions: ['fp32', 'bf16'], offset: 0.05 }, bf16);
    expect(small.profile.status, small.profile.error ?? '').toBe('ok');
    expect(small.engine.calls.prepares[0]!.precision).toBe('bf16');
    expect(small.profile.engine.precision).toMatchObject({ model: 'fp32', requested: 'bf16', executed: 'bf16' });
    expect(small.profile.correctness?.tolerance_rule).toMatch(/bf16 executed: rtol = 8u/);
    const big = await run({ precisions: ['fp32', 'bf16'], offset: 5 }, bf16);
    expect(big.profile.status).toBe('invalid_output');
    // The same error at fp32 fails the config's tolerance.
    const fp32 = await run({ offset: 0.05 });
    expect(fp32.profile.status).toBe('invalid_output');
  });

  it('uses the precision the runtime executed, not the one asked for', async () => {
    const fellBack = await run(
      { precisions: ['fp32', 'bf16'], executed: { executed: 'fp32', evidence: 'no bf16 on this CPU' }, offset: 0.05 },
      { engines: [{ name: 'ref' }, { name: 'fake', precision: 'bf16' }] },
    );
    expect(fellBack.profile.engine.precision).toMatchObject({ requested: 'bf16', executed: 'fp32', evidence: 'no bf16 on this CPU' });
    expect(fellBack.profile.status).toBe('invalid_output');
  });

  it('says which process the metrics measured and the threads the engine resolved', async () => {
    const inProcess = await run({});
    expect(inProcess.profile.engine.process).toBe('harness');
    expect(inProcess.profile.workload.threads).toBeNull();
    const worker = await run({ worker: true, threads: 4, modelOnly: true });
    expect(worker.profile.engine.process).toBe('worker');
    expect(worker.profile.workload.threads).toBe(4);
    expect(worker.profile.latency.model_only?.p50).toBe(500);
  });

  it('aggregates each metric as it declares, not by its name', async () => {
    let session = 0;
    const metric: Metric = {
      name: 'scripted',
      description: 'values per session',
      start() {},
      async stop() {
        session++;
        return [
          { name: 'peak_but_mean', value: session, unit: 'x', aggregate: 'mean' },
          { name: 'high_water', value: session * 10, unit: 'x', aggregate: 'max' },
        ];
      },
    };
    const { profile } = await run({}, {}, [metric]);
    expect(profile.metrics.peak_but_mean).toBe(2);
    expect(profile.metrics.high_water).toBe(30);
    expect(profile.sessions.map((s) => s.metrics.high_water)).toEqual([10, 20, 30]);
  });

  it('runs no scorer between a tracker start and stop', async () => {
    const events: string[] = [];
    const metric: Metric = {
      name: 'spy',
      description: 'records tracker starts and stops',
      start: () => void events.push('start'),
      stop: async () => (events.push('stop'), []),
    };
    const scorer: Scorer = {
      name: 'spy_scorer',
      description: 'records when it scores',
      needsLabels: false,
      needsReference: false,
      score: () => (events.push('score'), {}),
      reduce: () => [],
    };
    const engine = fakeEngine('fake');
    const { ctx, cells } = await fakeSweep([fakeEngine('ref'), engine], { scorers: ['spy_scorer'] }, [metric]);
    ctx.registry.scorers.set('spy_scorer', scorer);
    const profile = await runCell(ctx, cells.find((c) => c.engine.name === 'fake')!, new Deadline(30, 'spy'));
    await ctx.reference.release();
    expect(profile.status, profile.error ?? '').toBe('ok');
    let open = false;
    for (const e of events) {
      if (e === 'start') open = true;
      if (e === 'stop') open = false;
      expect(e === 'score' && open).toBe(false);
    }
    expect(events.filter((e) => e === 'score')).toHaveLength(BATCHES);
    expect(events.lastIndexOf('stop')).toBeLessThan(events.indexOf('score'));
  });
});
