import { afterEach, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { WORKER_PYTHON_DIR, WorkerClient } from '../../src/worker/client.js';
import { WorkerCrashedError, WorkerProtocolError, WorkerReplyError, WorkerTimeoutError } from '../../src/worker/errors.js';
import type { NamedTensor } from '../../src/worker/framing.js';
import { liveWorkerCount } from '../../src/worker/orphans.js';
import { BROKEN_IMPORT_WORKER, ECHO_WORKER, engineEnv, processAlive, REPO_PYTHON, tensorsOfEveryDtype, waitUntilGone } from './helpers.js';

const clients: WorkerClient[] = [];

function spawnEcho(): WorkerClient {
  const client = WorkerClient.spawn({ python: REPO_PYTHON, script: ECHO_WORKER, env: engineEnv('echo'), label: 'echo worker' });
  clients.push(client);
  return client;
}

async function loadedEcho(options: Record<string, unknown> = {}): Promise<WorkerClient> {
  const client = spawnEcho();
  await client.call('load', { model_path: '/models/echo.onnx', batch_size: 1, device: 'cpu', options, inputs: [], precision: 'fp32' });
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function doubled(t: NamedTensor): unknown[] {
  switch (t.dtype) {
    case 'float16':
      // Raw bits: 1.0 -> 2.0, 2.5 -> 5.0, -3.0 -> -6.0
      return [0x4000, 0x4500, 0xc600];
    case 'bool':
      return Array.from(t.data as Uint8Array, (v) => (v ? 0 : 1));
    case 'int64':
      return Array.from(t.data as BigInt64Array, (v) => v * 2n);
    case 'int8':
      // numpy wraps around like C
      return Array.from(t.data as Int8Array, (v) => ((v * 2 + 128) & 255) - 128);
    case 'uint8':
      return Array.from(t.data as Uint8Array, (v) => (v * 2) & 255);
    default:
      return Array.from(t.data as Float64Array, (v) => v * 2);
  }
}

describe('WorkerClient against a real worker process', () => {
  it('says hello with versions, pid and peak RSS', async () => {
    const client = spawnEcho();
    const { header } = await client.call('hello', { require: ['numpy'] });
    expect(header).toMatchObject({ protocol: 10, runtime: 'echo', version: '1.0.0', devices: ['cpu'], pid: client.pid });
    expect(header.python).toMatch(/^3\.\d+/);
    expect(client.rssPeakBytes).toBeGreaterThan(1_000_000);
  });

  it('round-trips every dtype through numpy', async () => {
    const client = await loadedEcho();
    const inputs = tensorsOfEveryDtype();
    const { header, tensors } = await client.request('infer', {}, inputs);
    expect(header.engine_ns).toBeGreaterThan(0);
    expect(tensors.map((t) => t.name)).toEqual(inputs.map((t) => `${t.name}_out`));
    tensors.forEach((out, i) => {
      const input = inputs[i]!;
      expect([out.dtype, out.dims]).toEqual([input.dtype, input.dims]);
      expect(out.data.constructor).toBe(input.data.constructor);
      expect(Array.from(out.data as ArrayLike<unknown>)).toEqual(doubled(input));
    });
  });

  it('passes a zero-size batch [0,1,8,8] through', async () => {
    const client = await loadedEcho();
    const { tensors } = await client.request('infer', {}, [{ name: 'input', dtype: 'float32', dims: [0, 1, 8, 8], data: new Float32Array(0) }]);
    expect(tensors).toHaveLength(1);
    expect(tensors[0]).toMatchObject({ name: 'input_out', dtype: 'float32', dims: [0, 1, 8, 8] });
    expect(tensors[0]!.data.length).toBe(0);
  });

  it('round-trips a 64 MB tensor', async () => {
    const client = await loadedEcho();
    const n = 16 * 1024 * 1024;
    const data = new Float32Array(n);
    for (let i = 0; i < n; i += 1021) data[i] = i;
    data[n - 1] = -1;
    const started = performance.now();
    const { tensors } = await client.request('infer', {}, [{ name: 'big', dtype: 'float32', dims: [n], data }]);
    const elapsed = performance.now() - started;
    const out = tensors[0]!.data as Float32Array;
    expect(out.length).toBe(n);
    expect(out[1021 * 5000]).toBe(2 * 1021 * 5000);
    expect(out[n - 1]).toBe(-2);
    expect(elapsed).toBeLessThan(10_000);
  });

  it('answers overlapping requests in order', async () => {
    const client = await loadedEcho();
    const replies = await Promise.all(
      [1, 2, 3, 4, 5].map((v) => client.request('infer', {}, [{ name: 'x', dtype: 'int32', dims: [1], data: new Int32Array([v]) }])),
    );
    expect(replies.map((r) => (r.tensors[0]!.data as Int32Array)[0])).toEqual([2, 4, 6, 8, 10]);
  });

  it('keeps prints of the runtime (Python and fd 1) off the frame stream', async () => {
    const client = await loadedEcho({ mode: 'print' });
    for (let i = 0; i < 3; i++) {
      const { tensors } = await client.request('infer', {}, [{ name: 'x', dtype: 'float64', dims: [1], data: new Float64Array([i]) }]);
      expect(Array.from(tensors[0]!.data as Float64Array)).toEqual([2 * i]);
    }
    const tail = client.stderrTail();
    expect(tail).toContain('echo_worker: importing');
    expect(tail).toContain('echo_worker: C-level import noise');
    expect(tail).toContain('print() noise');
    expect(tail).toContain('raw fd 1 noise');
  });

  it('turns a runtime exception into WorkerReplyError and stays usable', async () => {
    const client = await loadedEcho({ mode: 'raise' });
    const error = await client.request('infer', {}, []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerReplyError);
    expect(error).toMatchObject({ kind: 'runtime_error', runtimeMessage: 'echo_worker was asked to fail', fatal: false });
    expect((error as WorkerReplyError).traceback).toContain('ValueError');
    await client.call('load', { model_path: 'echo.onnx', batch_size: 1, options: {}, inputs: [], precision: 'fp32' });
    const { tensors } = await client.request('infer', {}, [{ name: 'x', dtype: 'int32', dims: [1], data: new Int32Array([21]) }]);
    expect((tensors[0]!.data as Int32Array)[0]).toBe(42);
  });

  it('rejects commands out of order and unknown commands as bad_request', async () => {
    const client = spawnEcho();
    await expect(client.request('infer')).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringContaining('send load first') });
    await expect(client.request('frobnicate')).rejects.toMatchObject({ kind: 'bad_request' });
    await expect(client.request('run', { index: 0 })).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringContaining('send load first') });
    await expect(client.request('load_samples', { batches: 1 })).rejects.toMatchObject({ kind: 'bad_request' });
    await expect(client.call('hello')).resolves.toBeDefined();
  });

  it('refuses reserved header fields before sending anything', async () => {
    const client = spawnEcho();
    for (const field of ['id', 'cmd', 'tensors']) {
      await expect(client.request('hello', { [field]: 1 })).rejects.toThrow(`"${field}" is a reserved header field`);
    }
    await expect(client.call('hello')).resolves.toMatchObject({ header: { id: 1 } });
  });

  it('rejects a load that does not say which precision to execute', async () => {
    const client = spawnEcho();
    const error = await client.call('load', { model_path: 'echo.onnx', batch_size: 1, options: {}, inputs: [] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'bad_request', runtimeMessage: expect.stringContaining('"load" needs a string "precision"') });
    await expect(client.call('load', { model_path: 'echo.onnx', batch_size: 1, options: {}, inputs: [], precision: 'fp32' })).resolves.toBeDefined();
  });

  it('a fatal error ends the worker after its reply', async () => {
    const client = await loadedEcho({ mode: 'fatal' });
    await expect(client.request('infer')).rejects.toMatchObject({ fatal: true, kind: 'runtime_error' });
    expect(await client.exited).toEqual({ exitCode: 1, signal: undefined });
    await expect(client.request('hello')).rejects.toBeInstanceOf(WorkerCrashedError);
  });

  it('kills a worker that passes its timeout and reports the stderr tail', async () => {
    const client = await loadedEcho({ mode: 'sleep', sleep_s: 30 });
    const started = Date.now();
    const error = await client.request('infer', {}, [], { timeoutMs: 500 }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(WorkerTimeoutError);
    expect(error).toMatchObject({ cmd: 'infer', timeoutMs: 500 });
    expect((error as WorkerTimeoutError).stderrTail).toContain('echo_worker: sleeping');
    expect((error as Error).message).toContain('did not answer "infer" within 500 ms');
    expect(await client.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(await waitUntilGone(client.pid!)).toBe(true);
  });

  it('times out the request whose own deadline passes first, whatever was sent before it, after many quick ones', async () => {
    const client = await loadedEcho({ mode: 'sleep', sleep_s: 30 });
    // Quick requests with short deadlines that settle in time must not time out later ones.
    for (let i = 0; i < 20; i++) await client.request('hello', {}, [], { timeoutMs: 20_000 });
    const started = Date.now();
    const slow = client.request('infer', {}, [], { timeoutMs: 60_000 }).catch((e: unknown) => e);
    const short = client.request('hello', {}, [], { timeoutMs: 400 }).catch((e: unknown) => e);
    const [first, second] = [await short, await slow];
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(first).toBeInstanceOf(WorkerTimeoutError);
    expect(first).toMatchObject({ cmd: 'hello', timeoutMs: 400 });
    // The kill that ended the short one takes the slow one with it, naming why.
    expect(second).toBeInstanceOf(WorkerCrashedError);
    expect((second as Error).message).toContain('timeout of "hello" after 400 ms');
  });

  it('reports a worker killed by SIGKILL mid-request as WorkerCrashedError', async () => {
    const client = await loadedEcho({ mode: 'kill' });
    const error = await client.request('infer').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerCrashedError);
    expect(error).toMatchObject({ signal: 'SIGKILL', during: 'infer' });
    expect((error as Error).message).toMatch(/echo worker was killed by SIGKILL while "infer" was pending/);
    expect((error as WorkerCrashedError).stderrTail).toContain('killing myself');
  });

  it('reports a worker that exits mid-request with its exit code', async () => {
    const client = await loadedEcho({ mode: 'exit', code: 7 });
    const error = await client.request('infer').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerCrashedError);
    expect(error).toMatchObject({ exitCode: 7, during: 'infer' });
    expect((error as WorkerCrashedError).stderrTail).toContain('exiting on purpose');
  });

  it('kills a worker that writes garbage on the frame stream', async () => {
    const client = await loadedEcho({ mode: 'corrupt' });
    const error = await client.request('infer').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerProtocolError);
    expect((error as Error).message).toContain('this is not a frame');
    expect(await client.exited).toMatchObject({ signal: 'SIGKILL' });
  });

  it('reports a script whose runtime module is missing as import_error', async () => {
    const client = WorkerClient.spawn({ python: REPO_PYTHON, script: BROKEN_IMPORT_WORKER, env: engineEnv('broken-import'), label: 'broken worker' });
    clients.push(client);
    const error = await client.request('hello').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerReplyError);
    expect(error).toMatchObject({ kind: 'import_error', fatal: true });
    expect((error as WorkerReplyError).runtimeMessage).toContain("No module named 'pbh_no_such_runtime'");
  });

  it('answers the first request with bad_manifest when it is not told its manifest, and exits', async () => {
    const client = WorkerClient.spawn({ python: REPO_PYTHON, script: ECHO_WORKER, env: { PBH_ENGINE_MANIFEST: '', PBH_ENGINE: '' }, label: 'unnamed worker' });
    clients.push(client);
    const error = await client.request('hello').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerReplyError);
    expect(error).toMatchObject({ kind: 'bad_manifest', fatal: true });
    expect((error as WorkerReplyError).runtimeMessage).toContain('set PBH_ENGINE_MANIFEST');
    expect((await client.exited).exitCode).toBe(2);

    const misnamed = WorkerClient.spawn({ python: REPO_PYTHON, script: ECHO_WORKER, env: engineEnv('no-such-engine'), label: 'misnamed worker' });
    clients.push(misnamed);
    const refused = await misnamed.request('hello').catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: 'bad_manifest', fatal: true });
    expect((refused as WorkerReplyError).runtimeMessage).toMatch(/declares no engine 'no-such-engine' \(it declares \['echo', /);
  });

  it('reports a python that cannot be started', async () => {
    const client = WorkerClient.spawn({ python: '/nonexistent/bin/python', script: ECHO_WORKER, label: 'ghost worker' });
    const error = await client.request('hello').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerCrashedError);
    expect((error as Error).message).toMatch(/ghost worker.*ENOENT/s);
  });

  it('leaves no process behind after close, and none tracked', async () => {
    const client = await loadedEcho();
    const pid = client.pid!;
    expect(processAlive(pid)).toBe(true);
    await client.close();
    expect(await client.exited).toEqual({ exitCode: 0, signal: undefined });
    expect(await waitUntilGone(pid)).toBe(true);
    const late = await client.request('hello').catch((e: unknown) => e);
    expect(late).toBeInstanceOf(WorkerCrashedError);
    expect((late as Error).message).toMatch(/^echo worker exited with code 0 \(so "hello" cannot be sent\)/);
    expect(liveWorkerCount()).toBe(clients.filter((c) => c.running).length);
  });

  it('exits on its own when its stdin closes (the parent is gone)', async () => {
    const worker = execa(REPO_PYTHON, ['-m', 'pbh_worker', ECHO_WORKER], {
      env: { PYTHONPATH: WORKER_PYTHON_DIR, ...engineEnv('echo') },
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      reject: false,
    });
    worker.stdin.write('{"id":1,"cmd":"hello"}\n');
    worker.stdin.end();
    const result = await worker;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^\{"id":1,"ok":true,"protocol":10,/);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('kills a worker whose close hangs', async () => {
    const client = await loadedEcho({ mode: 'sleep', sleep_s: 30 });
    const pending = client.request('infer', {}, [], { timeoutMs: 60_000 }).catch((e: unknown) => e);
    const started = Date.now();
    await client.close({ timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await pending).toBeInstanceOf(WorkerCrashedError);
    expect(await waitUntilGone(client.pid!)).toBe(true);
  });
});
