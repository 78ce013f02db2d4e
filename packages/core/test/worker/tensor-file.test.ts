import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { WORKER_PYTHON_DIR, WorkerClient } from '../../src/worker/client.js';
import type { NamedTensor } from '../../src/worker/framing.js';
import { removeTensorFile, TENSOR_FILE_PREFIX, writeTensorFile } from '../../src/worker/tensor-file.js';
import { ECHO_WORKER, engineEnv, REPO_PYTHON } from './helpers.js';

// load_samples' bytes through a file under /dev/shm that the worker maps in place (tensor-file.ts, channel.py).

const clients: WorkerClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const tensorFiles = (): string[] => readdirSync('/dev/shm').filter((name) => name.startsWith(`${TENSOR_FILE_PREFIX}${process.pid}-`));

/** Batch b: a float32 [2,3] filled with b * step, and an odd-sized uint8 tensor, so the next batch needs padding. */
function residentSet(count: number, step: number): NamedTensor[] {
  return Array.from({ length: count }, (_, b) => [
    { name: 'input', dtype: 'float32' as const, dims: [2, 3], data: new Float32Array(6).fill(b * step) },
    { name: 'tag', dtype: 'uint8' as const, dims: [5], data: Uint8Array.from([b, 1, 2, 3, 4]) },
  ]).flat();
}

describe('tensor files', () => {
  it('lays the tensors out at 64-byte offsets, in order', async () => {
    const path = await writeTensorFile(residentSet(2, 3));
    expect(path).toBeDefined();
    const bytes = readFileSync(path!);
    removeTensorFile(path!);
    // input 0 at 0 (24 B), tag 0 at 64 (5 B), input 1 at 128 (24 B), tag 1 at 192: the file ends with it.
    expect(bytes.length).toBe(197);
    expect(new Float32Array(bytes.buffer, bytes.byteOffset + 128, 6)).toEqual(new Float32Array(6).fill(3));
    expect([...bytes.subarray(192)]).toEqual([1, 1, 2, 3, 4]);
    expect([...bytes.subarray(24, 64)].every((b) => b === 0)).toBe(true);
  });

  it('carries load_samples through a file the worker maps and removes', async () => {
    const client = WorkerClient.spawn({ python: REPO_PYTHON, script: ECHO_WORKER, env: engineEnv('echo'), label: 'echo worker' });
    clients.push(client);
    await client.call('load', { model_path: '/m.onnx', batch_size: 2, device: 'cpu', options: { mode: 'busy_value' }, inputs: [], precision: 'fp32' });
    const set = residentSet(3, 4);
    const bytesFile = await writeTensorFile(set);
    expect(bytesFile).toBeDefined();
    const loaded = await client.call('load_samples', { batches: 3 }, set, { bytesFile: bytesFile! });
    expect(loaded.header).toMatchObject({ batches: 3, bytes: 3 * (24 + 5) });
    // The resident set lives in the file's mapping, which outlives its name.
    const maps = readFileSync(`/proc/${client.pid}/maps`, 'utf8');
    expect(maps).toMatch(new RegExp(`/dev/shm/${TENSOR_FILE_PREFIX}${process.pid}-\\d+ \\(deleted\\)`));
    expect(tensorFiles()).toEqual([]);
    // busy_value spins for the batch's first element in ms: the mapped bytes are the ones sent.
    expect((await client.call('run', { index: 2 })).header.engine_ns).toBeGreaterThanOrEqual(8e6);
    expect((await client.call('run', { index: 0 })).header.engine_ns).toBeLessThan(4e6);
  });

  it('leaves no file behind when the frame cannot be encoded or the worker is gone', async () => {
    const client = WorkerClient.spawn({ python: REPO_PYTHON, script: ECHO_WORKER, env: engineEnv('echo'), label: 'echo worker' });
    clients.push(client);
    const wrong = { name: 'input', dtype: 'float32' as const, dims: [4], data: new Float32Array(3) };
    const wrongFile = await writeTensorFile([wrong]);
    await expect(client.request('load_samples', { batches: 1 }, [wrong], { bytesFile: wrongFile! })).rejects.toThrow(/dims \[4\] hold 4 elements/);
    expect(tensorFiles()).toEqual([]);
    const stopped = WorkerClient.spawn({ python: REPO_PYTHON, script: ECHO_WORKER, env: engineEnv('echo'), label: 'echo worker' });
    await stopped.close();
    const set = residentSet(1, 1);
    const orphan = await writeTensorFile(set);
    await expect(stopped.request('load_samples', { batches: 1 }, set, { bytesFile: orphan! })).rejects.toThrow(/cannot be sent/);
    expect(tensorFiles()).toEqual([]);
    await expect(client.request('load_samples', { bytes_file: '/etc/hostname' })).rejects.toThrow(/"bytes_file" is a reserved header field/);
  });

  it('refuses a bytes_file that is not a tensor file under /dev/shm, and leaves the file alone', () => {
    const load = { id: 1, cmd: 'load', model_path: '/m.onnx', batch_size: 2, device: 'cpu', options: {}, inputs: [], precision: 'fp32' };
    const samples = { id: 2, cmd: 'load_samples', batches: 1, tensors: [{ name: 'input', dtype: 'uint8', shape: [4], nbytes: 4 }], bytes_file: '/etc/hostname' };
    const worker = spawnSync(REPO_PYTHON, ['-m', 'pbh_worker', ECHO_WORKER], {
      input: `${JSON.stringify(load)}\n${JSON.stringify(samples)}\n`,
      env: { ...process.env, PYTHONPATH: WORKER_PYTHON_DIR, ...engineEnv('echo') },
      encoding: 'utf8',
    });
    const replies = worker.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: number | null; ok: boolean; error?: string; fatal?: boolean });
    expect(replies[0]).toMatchObject({ id: 1, ok: true });
    expect(replies[1]).toMatchObject({ ok: false, fatal: true });
    expect(replies[1]?.error).toContain(`"bytes_file" must be a /dev/shm/${TENSOR_FILE_PREFIX}* file the client wrote, got '/etc/hostname'`);
    expect(readFileSync('/etc/hostname', 'utf8').length).toBeGreaterThan(0);
  });
});
