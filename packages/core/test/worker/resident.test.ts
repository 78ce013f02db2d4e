import { afterEach, describe, expect, it } from 'vitest';
import type { PreparedModel } from '../../src/contracts/engine.js';
import type { TensorMap } from '../../src/contracts/tensor.js';
import { WorkerCrashedError, WorkerReplyError, WorkerTimeoutError } from '../../src/worker/errors.js';
import type { NativeEngineTimeouts } from '../../src/worker/native-engine.js';
import { liveWorkerCount } from '../../src/worker/orphans.js';
import { fixtureEngine, waitUntilGone } from './helpers.js';

// Resident batches (load_samples / run) against the real echo worker: the call it binds per batch doubles the batch
// as infer does, or (busy_value) spins for as many ms as the batch's first element, so engine_ns shows which batch ran.

const prepared: PreparedModel[] = [];
afterEach(async () => {
  await Promise.all(prepared.splice(0).map((m) => m.dispose()));
});

async function echoModel(options: Record<string, unknown> = {}, timeouts: Partial<NativeEngineTimeouts> = {}): Promise<PreparedModel> {
  const engine = fixtureEngine('echo', { timeouts });
  const model = await engine.prepare({
    model: { name: 'digits', path: '/models/digits.onnx', workDir: '/tmp/pbh-echo-work' },
    batchSize: 2,
    device: 'cpu',
    options: engine.optionsSchema.parse(options),
    inputs: [{ name: 'input', dtype: 'float32', shape: [2, 3] }],
    seed: 0,
    precision: 'fp32',
    process: 'worker',
  });
  prepared.push(model);
  return model;
}

/** Batch b holds `b * step` in every element (plus an int64 second input, so batches carry two tensors). */
function batches(count: number, step = 1): TensorMap[] {
  return Array.from({ length: count }, (_, b) => ({
    input: { dtype: 'float32', dims: [2, 3], data: new Float32Array(6).fill(b * step) },
    ids: { dtype: 'int64', dims: [2], data: BigInt64Array.from([BigInt(b), 7n]) },
  }));
}

describe("a worker's sample library and resident runs: load_samples, unload_samples and run", () => {
  it('runs every resident batch by index and times it in the worker', async () => {
    const model = await echoModel({ mode: 'busy_value' });
    // Batch b spins 3*b ms: the engine time says which batch ran, and that the timer covers the runtime's call.
    await model.library.load(batches(4, 3));
    for (const index of [3, 0, 2, 1]) {
      const { engineNs } = await model.sut.issue(index);
      expect(typeof engineNs).toBe('bigint');
      expect(Number(engineNs) / 1e6).toBeGreaterThanOrEqual(3 * index);
      expect(Number(engineNs) / 1e6).toBeLessThan(3 * index + 40);
    }
  });

  it('runs each resident batch through the call bound to it, with an engine time', async () => {
    const model = await echoModel();
    await model.library.load(batches(3));
    const times = [];
    for (let i = 0; i < 3; i++) times.push((await model.sut.issue(i)).engineNs);
    expect(times.every((ns) => ns > 0n)).toBe(true);
  });

  it('refuses an index outside the resident set, or a run before any, and keeps serving', async () => {
    const model = await echoModel();
    const before = await model.sut.issue(0).catch((e: unknown) => e);
    expect(before).toBeInstanceOf(WorkerReplyError);
    expect(before).toMatchObject({ kind: 'bad_request', fatal: false });
    expect((before as Error).message).toContain('"run" before "load_samples"');

    await model.library.load(batches(2));
    const outside = await model.sut.issue(2).catch((e: unknown) => e);
    expect(outside).toMatchObject({ kind: 'bad_request' });
    expect((outside as Error).message).toContain('"run" index 2 is not a resident batch: 2 are loaded');
    await expect(model.sut.issue(-1)).rejects.toMatchObject({ kind: 'bad_request' });
    await expect(model.sut.issue(1.5)).rejects.toThrow(/needs an integer "index" >= 0, got 1.5/);
    expect((await model.sut.issue(1)).engineNs > 0n).toBe(true);
  });

  it('replaces the resident set on every load_samples', async () => {
    const model = await echoModel();
    await model.library.load(batches(3));
    await model.library.load(batches(1));
    await expect(model.sut.issue(1)).rejects.toThrow(/index 1 is not a resident batch: 1 are loaded/);
    expect((await model.sut.issue(0)).engineNs > 0n).toBe(true);
  });

  it('refuses batches whose inputs differ', async () => {
    const model = await echoModel();
    const [a, b] = batches(2);
    const error = await model.library.load([a!, { input: b!.input! }]).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'bad_request' });
    expect((error as Error).message).toContain('announced 2 batches but sent 3 tensors');
    const renamed = await model.library.load([a!, { input: b!.input!, other: b!.ids! }]).catch((e: unknown) => e);
    expect((renamed as Error).message).toContain("batch 1 has inputs ['input', 'other'], batch 0 has ['ids', 'input']");
    await expect(model.sut.issue(0)).rejects.toThrow(/before "load_samples"/);
  });

  it('unloads the resident set on request: later runs are refused until the next load', async () => {
    const model = await echoModel();
    await model.library.load(batches(2));
    expect((await model.sut.issue(1)).engineNs > 0n).toBe(true);
    await model.library.unload();
    await expect(model.sut.issue(0)).rejects.toThrow(/before "load_samples"/);
    await model.library.load(batches(1));
    expect((await model.sut.issue(0)).engineNs > 0n).toBe(true);
  });

  it('a worker that dies mid-session rejects the run with its exit and stderr, and is gone', async () => {
    const model = await echoModel({ die_after_runs: 5 });
    await model.library.load(batches(3));
    for (let i = 0; i < 5; i++) await model.sut.issue(i % 3);
    const pid = model.runsIn.pid;
    const error = await model.sut.issue(2).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerCrashedError);
    expect((error as Error).message).toMatch(/SIGKILL/);
    expect((error as Error).message).toContain('"run"');
    expect((error as Error).message).toContain('echo_worker: dying after 5 runs');
    expect(await waitUntilGone(pid)).toBe(true);
    await expect(model.sut.issue(0)).rejects.toBeInstanceOf(WorkerCrashedError);
  });

  it('a run that hangs past the infer timeout is killed with its stderr', async () => {
    const model = await echoModel({ mode: 'sleep', sleep_s: 60 }, { infer: 1_000 });
    await model.library.load(batches(1));
    const pid = model.runsIn.pid;
    const started = performance.now();
    const error = await model.sut.issue(0).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(WorkerTimeoutError);
    expect((error as Error).message).toContain('"run"');
    expect((error as Error).message).toContain('echo_worker: sleeping');
    expect(await waitUntilGone(pid)).toBe(true);
    await model.dispose();
    prepared.length = 0;
    expect(liveWorkerCount()).toBe(0);
  });

  it("measures the transport of a resident run (the harness's time - engine) through plain frames", async () => {
    const model = await echoModel();
    await model.library.load(batches(4));
    for (let i = 0; i < 200; i++) await model.sut.issue(i % 4);
    const transport: number[] = [];
    for (let i = 0; i < 1_000; i++) {
      const start = process.hrtime.bigint();
      const { engineNs } = await model.sut.issue(i % 4);
      transport.push(Number(process.hrtime.bigint() - start - engineNs));
    }
    transport.sort((x, y) => x - y);
    const p50 = transport[transport.length >> 1]!;
    console.log(`run transport (predict - engine), header-only: p50 ${(p50 / 1000).toFixed(1)} µs, p90 ${(transport[Math.floor(transport.length * 0.9)]! / 1000).toFixed(1)} µs`);
    // Generous for a loaded 2-core box: a diagnostic, reported, not a target.
    expect(p50).toBeLessThan(2_000_000);
  });
});
