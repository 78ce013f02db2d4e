import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { PreparedModel } from '../../src/contracts/engine.js';
import { enginesFromManifest } from '../../src/worker/native-engine.js';
import { liveWorkerCount } from '../../src/worker/orphans.js';
import { loadReplySchema } from '../../src/worker/protocol.js';
import { FIXTURE_MANIFEST, fixtureEngine, processAlive, waitUntilGone } from './helpers.js';

const echoEngine = () => fixtureEngine('echo');

/** A prepare request, its options parsed by the engine's schema as the harness does. */
function request(options: Record<string, unknown> = {}, path = '/models/digits.onnx') {
  return {
    model: { name: 'digits', path, workDir: '/tmp/pbh-echo-work' },
    batchSize: 4,
    device: 'cpu',
    options: echoEngine().optionsSchema.parse(options),
    inputs: [{ name: 'input', dtype: 'float32' as const, shape: [4, 1, 8, 8] }],
    seed: 3,
    precision: 'fp32' as const,
    process: 'worker' as const,
  };
}

const prepared: PreparedModel[] = [];
afterEach(async () => {
  await Promise.all(prepared.splice(0).map((m) => m.dispose()));
});

describe('createNativeEngine', () => {
  it('makes every engine a manifest declares, with its options schema', () => {
    const engines = enginesFromManifest(FIXTURE_MANIFEST);
    expect(engines.map((e) => e.name)).toEqual(['echo', 'echo-missing-runtime', 'broken-import', 'scripted-lm']);
    const echo = engines[0]!;
    expect(echo).toMatchObject({ devices: ['cpu'], precisions: ['fp32', 'fp16'], processes: ['worker'] });
    expect(echo.optionsSchema.parse({})).toEqual({ mode: 'echo', sleep_s: 10, code: 7, max_concurrency: 1 });
    expect(echo.optionsSchema.safeParse({ mode: 'dance' }).success).toBe(false);
    expect(echo.optionsSchema.safeParse({ threads: 2 }).success).toBe(false);
  });

  const savedPython = process.env.PBH_PYTHON;
  afterAll(() => {
    if (savedPython === undefined) delete process.env.PBH_PYTHON;
    else process.env.PBH_PYTHON = savedPython;
  });

  it('probes through a worker hello and caches the answer per process', async () => {
    const engine = echoEngine();
    const first = await engine.probe('worker');
    expect(first).toMatchObject({ available: true, version: '1.0.0', devices: ['cpu'] });
    expect(first.available && first.details?.python).toMatch(/^3\./);
    const started = performance.now();
    expect(await echoEngine().probe('worker')).toBe(first);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it('is unavailable, with the fix, when the runtime module is missing', async () => {
    const viaRequire = await fixtureEngine('echo-missing-runtime').probe('worker');
    expect(viaRequire).toMatchObject({ available: false });
    expect(!viaRequire.available && viaRequire.reason).toContain("needs the Python module 'pbh_no_such_runtime'");
    expect(!viaRequire.available && viaRequire.fix).toContain('npx pbh doctor --fix');

    const viaImport = await fixtureEngine('broken-import').probe('worker');
    expect(viaImport).toMatchObject({ available: false });
    expect(!viaImport.available && viaImport.reason).toContain("No module named 'pbh_no_such_runtime'");
    expect(!viaImport.available && viaImport.fix).toContain('.venv/bin/pip install -r python/requirements.txt');
  });

  it('is unavailable, with the fix, when the venv python does not exist', async () => {
    process.env.PBH_PYTHON = '/nonexistent/.venv/bin/python';
    try {
      // Another name: the probe of 'echo' is cached for this process.
      const availability = await fixtureEngine('echo', { name: 'echo-novenv' }).probe('worker');
      expect(availability).toMatchObject({ available: false });
      expect(!availability.available && availability.reason).toContain('PBH_PYTHON=/nonexistent/.venv/bin/python does not exist');
      expect(!availability.available && availability.fix).toContain('npx pbh doctor --fix');
      await expect(echoEngine().prepare(request())).rejects.toThrow(/Fix: npx pbh doctor --fix/);
    } finally {
      if (savedPython === undefined) delete process.env.PBH_PYTHON;
      else process.env.PBH_PYTHON = savedPython;
    }
  });

  it('prepares a model in its own worker and serves predict, bench, profile, memory, pid, dispose', async () => {
    const model = await echoEngine().prepare(request({ mode: 'echo' }));
    prepared.push(model);
    expect(model.compileMs).toBe(1.5);
    expect(model.inputs).toEqual([{ name: 'input', dtype: 'float32', shape: [4, 1, 8, 8] }]);
    expect(model.outputs).toEqual([{ name: 'input_out', dtype: 'float32', shape: [4, 1, 8, 8] }]);
    expect(model.facts).toMatchObject({ mode: 'echo', batch_size: 4, runtimeVersion: '1.0.0' });

    const data = Float32Array.from({ length: 256 }, (_, i) => i);
    const batch = { input: { dtype: 'float32' as const, dims: [4, 1, 8, 8], data } };
    const result = await model.sut.infer(batch);
    expect(result.outputs.input_out!.dims).toEqual([4, 1, 8, 8]);
    expect((result.outputs.input_out!.data as Float32Array)[255]).toBe(510);
    expect(typeof result.engineNs).toBe('bigint');
    expect(result.engineNs! > 0n).toBe(true);

    const bench = await model.probes.modelOnly!(batch, 5);
    expect(bench.iterationNs).toHaveLength(5);
    expect(bench.iterationNs.every((ns) => ns > 0)).toBe(true);

    expect(await model.probes.layers!(batch, 3)).toEqual([{ name: 'double', op_type: 'Mul', mean_ns: 123, calls: 3, input_shapes: null, output_shapes: '[1]' }]);
    expect((await model.probes.memory()).rssBytes).toBeGreaterThan(1_000_000);

    const pid = model.runsIn.pid;
    expect(processAlive(pid)).toBe(true);
    await model.dispose();
    prepared.length = 0;
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it('sends the requested precision and maps what the worker executed and its threads', async () => {
    const engine = echoEngine();
    expect(engine.precisions).toEqual(['fp32', 'fp16']);
    const model = await engine.prepare({ ...request(), precision: 'fp16' });
    prepared.push(model);
    expect(model.precision).toEqual({ executed: 'fp16', evidence: 'echo worker: numpy doubles each input in its own dtype (asked fp16)' });
    expect(model.threads).toBe(1);
    expect(model.facts).not.toHaveProperty('threads');
  });

  it('declares threads null when the runtime does not say them', async () => {
    const model = await echoEngine().prepare(request({ mode: 'no_threads' }));
    prepared.push(model);
    expect(model.threads).toBeNull();
    expect(model.precision).toMatchObject({ executed: 'fp32' });
  });

  it('refuses a load reply without the executed precision (every worker reads it back)', () => {
    const reply = { id: 2, ok: true, compile_ms: 1, inputs: [], outputs: [], facts: {}, threads: 1, max_concurrency: 1 };
    expect(loadReplySchema.safeParse(reply).success).toBe(false);
    expect(loadReplySchema.safeParse({ ...reply, precision: { executed: 'fp32', evidence: 'read back' } }).success).toBe(true);
  });

  it('rejects a load reply whose executed precision is not one PBH knows', async () => {
    const error = (await echoEngine().prepare(request({ mode: 'bad_precision' })).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('echo could not load /models/digits.onnx');
    expect(error.message).toMatch(/precision\.executed/);
    expect(liveWorkerCount()).toBe(0);
  });

  it('spawns one worker per prepared model', async () => {
    const engine = echoEngine();
    const [a, b] = await Promise.all([engine.prepare(request()), engine.prepare(request())]);
    prepared.push(a!, b!);
    expect(a!.runsIn.pid).not.toBe(b!.runsIn.pid);
  });

  it('throws load failures with the runtime message and the stderr tail, and leaves no worker', async () => {
    const error = await echoEngine()
      .prepare(request({}, '/models/missing.onnx'))
      .catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('echo could not load /models/missing.onnx (batch 4, device cpu)');
    expect((error as Error).message).toContain('cannot read /models/missing.onnx: no such file');
    expect((error as Error).message).toContain('echo_worker: importing');
    expect(liveWorkerCount()).toBe(0);
  });

  it('measures the IPC overhead of predict over the engine time for a small batch', async () => {
    const model = await echoEngine().prepare(request());
    prepared.push(model);
    const batch = { input: { dtype: 'float32' as const, dims: [4, 1, 8, 8], data: new Float32Array(256) } };
    for (let i = 0; i < 50; i++) await model.sut.infer(batch);
    const overheads: number[] = [];
    for (let i = 0; i < 300; i++) {
      const start = process.hrtime.bigint();
      const { engineNs } = await model.sut.infer(batch);
      overheads.push(Number(process.hrtime.bigint() - start - engineNs!));
    }
    overheads.sort((x, y) => x - y);
    const median = overheads[overheads.length >> 1]!;
    console.log(`predict - engine for [4,1,8,8] float32: median ${(median / 1000).toFixed(1)} µs, p90 ${(overheads[Math.floor(overheads.length * 0.9)]! / 1000).toFixed(1)} µs`);
    // Generous bound for a loaded 2-core CI box; typical is ~100 µs.
    expect(median).toBeLessThan(5_000_000);
  });
});
