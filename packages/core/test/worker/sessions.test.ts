import { afterEach, describe, expect, it } from 'vitest';
import type { QuerySchedule, ScheduleTimings } from '../../src/contracts/engine.js';
import type { TensorMap } from '../../src/contracts/tensor.js';
import { WorkerReplyError } from '../../src/worker/errors.js';
import type { PreparedModel } from '../../src/contracts/engine.js';
import { fixtureEngine } from './helpers.js';

// Whole sessions in the real echo worker: run_closed_loop (the loop's own timer around each bound call) and
// run_schedule (pbh_worker/measure.py's FIFO over the echo's bind_async, a thread per query). With busy_value or
// sleep_value, batch b takes as many ms as its value, so the times say which batch ran.

const prepared: PreparedModel[] = [];
afterEach(async () => {
  await Promise.all(prepared.splice(0).map((m) => m.dispose()));
});

async function echoModel(options: Record<string, unknown>): Promise<PreparedModel> {
  const engine = fixtureEngine('echo');
  const model = await engine.prepare({
    model: { name: 'digits', path: '/models/digits.onnx', workDir: '/tmp/pbh-echo-work' },
    batchSize: 1,
    device: 'cpu',
    options: engine.optionsSchema.parse(options),
    inputs: [{ name: 'input', dtype: 'float32', shape: [1, 1] }],
    seed: 0,
    precision: 'fp32',
    process: 'worker',
  });
  prepared.push(model);
  return model;
}

/** One batch per value: its only element is the ms the echo worker's call takes on it. */
function batchesOf(ms: number[]): TensorMap[] {
  return ms.map((value) => ({ input: { dtype: 'float32', dims: [1, 1], data: Float32Array.of(value) } }));
}

/** At most `limit` queries in flight at any instant: issued..completed intervals, swept in time order. */
function maxInFlight({ issuedNs, completedNs }: ScheduleTimings): number {
  // A completion at the same ns as an issue frees its slot first (the issuer waited for it).
  const events = [...issuedNs.map((t) => [t, 1] as const), ...completedNs.map((t) => [t, -1] as const)].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let inFlight = 0;
  let max = 0;
  for (const [, delta] of events) max = Math.max(max, (inFlight += delta));
  return max;
}

function expectFifo(schedule: QuerySchedule, timings: ScheduleTimings): void {
  expect(timings.issuedNs).toHaveLength(schedule.batches.length);
  expect(timings.completedNs).toHaveLength(schedule.batches.length);
  timings.issuedNs.forEach((issued, q) => {
    expect(issued).toBeGreaterThanOrEqual(schedule.arrivalsNs[q]!);
    expect(timings.completedNs[q]!).toBeGreaterThanOrEqual(issued);
    if (q > 0) expect(issued).toBeGreaterThanOrEqual(timings.issuedNs[q - 1]!);
  });
  expect(maxInFlight(timings)).toBeLessThanOrEqual(schedule.concurrency);
}

describe('run_closed_loop: a stream session in the worker', () => {
  it('runs until both minimums are met, every batch in turn, each query timed around its call', async () => {
    const model = await echoModel({ mode: 'busy_value' });
    expect(model.capabilities.maxConcurrency).toBe(1);
    await model.library.load(batchesOf([1, 2, 3]));
    // min_queries binds: 7 queries of 1-3 ms take ~14 ms, longer than the 5 ms minimum.
    const byCount = await model.sut.closedLoop({ batches: 3, minQueries: 7, minDurationNs: 5e6 });
    expect(byCount.engineNs).toHaveLength(7);
    // Each at least its batch's spin (no upper bound per query: a loaded box preempts a spin for tens of ms).
    byCount.engineNs.forEach((ns, q) => expect(ns / 1e6).toBeGreaterThanOrEqual((q % 3) + 1));
    const sum = byCount.engineNs.reduce((a, b) => a + b, 0);
    expect(byCount.wallNs).toBeGreaterThanOrEqual(sum);
    // Nothing but the loop's bookkeeping between queries: well under a ms a query on any machine.
    expect(byCount.wallNs - sum).toBeLessThan(7 * 1e6);

    // min_duration binds: 60 ms of 1-3 ms queries is ~30 of them, far above min_queries.
    const byTime = await model.sut.closedLoop({ batches: 3, minQueries: 1, minDurationNs: 60e6 });
    expect(byTime.wallNs).toBeGreaterThanOrEqual(60e6);
    expect(byTime.engineNs.length).toBeGreaterThan(3);
    expect(byTime.engineNs.length).toBeLessThanOrEqual(31);
  });

  it('runs every batch once even when both minimums are already met', async () => {
    const model = await echoModel({ mode: 'busy_value' });
    await model.library.load(batchesOf([0, 0, 0, 0, 0]));
    const timings = await model.sut.closedLoop({ batches: 5, minQueries: 1, minDurationNs: 0 });
    expect(timings.engineNs).toHaveLength(5);
    expect(timings.engineNs.every((ns) => ns > 0)).toBe(true);
  });

  it('refuses more batches than are resident, or a session before load_samples, and keeps serving', async () => {
    const model = await echoModel({});
    await expect(model.sut.closedLoop({ batches: 1, minQueries: 1, minDurationNs: 0 })).rejects.toThrow(/before "load_samples"/);
    await model.library.load(batchesOf([0, 0]));
    const error = await model.sut.closedLoop({ batches: 3, minQueries: 1, minDurationNs: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerReplyError);
    expect((error as Error).message).toContain('uses 3 batches but 2 are resident');
    expect((await model.sut.closedLoop({ batches: 2, minQueries: 100, minDurationNs: 0 })).engineNs).toHaveLength(100);
  });
});

describe('run_schedule: a server/offline schedule in the worker', () => {
  it('issues one query at a time, FIFO, each once it is due', async () => {
    const model = await echoModel({ mode: 'busy_value' });
    await model.library.load(batchesOf([2, 5]));
    // Query 1 is due while query 0 (5 ms) runs: it is issued at query 0's completion, late, and says so.
    const schedule: QuerySchedule = { batches: [1, 0, 0, 1], arrivalsNs: [0, 1e6, 20e6, 21e6], concurrency: 1 };
    const timings = await model.sut.schedule(schedule);
    expectFifo(schedule, timings);
    expect(timings.issuedNs[1]!).toBeGreaterThanOrEqual(timings.completedNs[0]!);
    expect(timings.issuedNs[1]! - schedule.arrivalsNs[1]!).toBeGreaterThanOrEqual(4e6 - 1e5);
    expect(timings.completedNs[0]! - timings.issuedNs[0]!).toBeGreaterThanOrEqual(5e6);
    // Query 2 waits for its arrival (the worker was idle from ~7 ms): on time, within a scheduler's wake-up on a loaded box.
    expect(timings.issuedNs[2]! - 20e6).toBeLessThan(100e6);
  });

  it('keeps at most `concurrency` queries in flight and uses them all', async () => {
    const model = await echoModel({ mode: 'sleep_value', max_concurrency: 3 });
    expect(model.capabilities.maxConcurrency).toBe(3);
    await model.library.load(batchesOf([10]));
    // Offline: everything due at once.
    const schedule: QuerySchedule = { batches: Array(9).fill(0), arrivalsNs: Array(9).fill(0), concurrency: 3 };
    const timings = await model.sut.schedule(schedule);
    expectFifo(schedule, timings);
    expect(maxInFlight(timings)).toBe(3);
    // Overlapped: the session took less than its queries' own times one after another (~30 ms of 90 when idle;
    // load stretches both sides alike).
    const serial = timings.completedNs.reduce((sum, done, q) => sum + done - timings.issuedNs[q]!, 0);
    expect(Math.max(...timings.completedNs)).toBeLessThan(serial);
    await expect(model.sut.schedule({ ...schedule, concurrency: 4 })).rejects.toThrow(/outside 1\.\.3/);
  });

  it('fails a schedule whose query fails on its own thread with that error, and keeps serving', async () => {
    const model = await echoModel({ mode: 'raise', max_concurrency: 2 });
    await model.library.load(batchesOf([0]));
    const schedule: QuerySchedule = { batches: [0, 0, 0], arrivalsNs: [0, 0, 0], concurrency: 2 };
    const error = await model.sut.schedule(schedule).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerReplyError);
    expect(error).toMatchObject({ kind: 'runtime_error', runtimeMessage: 'echo_worker was asked to fail', fatal: false });
    await expect(model.sut.schedule(schedule)).rejects.toThrow(/asked to fail/);
  });

  it('refuses schedules the worker cannot run as given', async () => {
    const model = await echoModel({});
    await model.library.load(batchesOf([0]));
    await expect(model.sut.schedule({ batches: [0, 1], arrivalsNs: [0, 0], concurrency: 1 })).rejects.toThrow(/resident indices \(0\.\.0\)/);
    await expect(model.sut.schedule({ batches: [0, 0], arrivalsNs: [5, 1], concurrency: 1 })).rejects.toThrow(/non-decreasing/);
    await expect(model.sut.schedule({ batches: [0], arrivalsNs: [], concurrency: 1 })).rejects.toThrow(/one arrival per query/);
    const ok = await model.sut.schedule({ batches: [0, 0], arrivalsNs: [0, 1.5], concurrency: 1 });
    expect(ok.completedNs).toHaveLength(2);
  });
});
