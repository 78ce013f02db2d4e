import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerClient } from '../../src/worker/client.js';
import { CLIENT_CPUS } from '../../src/worker/placement.js';
import { ECHO_WORKER, REPO_PYTHON } from './helpers.js';

// Polled runs beside a runtime that pins a pool thread (the echo worker's pinned_thread): the worker keeps its main
// thread and this process's main thread on different CPUs while runs come through the page, and gives both back.

const clients: WorkerClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function cpusOf(pid: number, tid = pid): string {
  return /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))![1]!;
}

async function pollingWorker(options: Record<string, unknown>): Promise<WorkerClient> {
  const client = WorkerClient.spawn({ python: REPO_PYTHON, script: ECHO_WORKER, label: 'echo worker', env: { OPENBLAS_NUM_THREADS: '1' } });
  clients.push(client);
  expect((await client.call('hello')).header.doorbell).toBe(true);
  await client.call('load', { model_path: '/m.onnx', batch_size: 2, device: 'cpu', options, inputs: [], precision: 'fp32' });
  await client.call('load_samples', { batches: 1 }, [{ name: 'input', dtype: 'float32', dims: [2, 3], data: new Float32Array(6) }]);
  for (let i = 0; i < 200 && client.runsThroughDoorbell < 20; i++) await client.run(0);
  expect(client.runsThroughDoorbell).toBeGreaterThanOrEqual(20);
  return client;
}

describe.skipIf(availableParallelism() < 2 || CLIENT_CPUS === undefined)('placement of polled runs', () => {
  it('keeps the client off the worker main thread\'s CPU while runs come through the page, and restores both before a session', async () => {
    const client = await pollingWorker({ pinned_thread: true });
    const pid = client.pid!;
    const workerMain = cpusOf(pid);
    expect(workerMain).toMatch(/^\d+$/);
    const clientCpus = cpusOf(process.pid);
    expect(clientCpus).not.toBe(CLIENT_CPUS);
    expect(clientCpus.split(/[,-]/)).not.toContain(workerMain);
    const before = cpusOf(pid);
    await client.call('run_closed_loop', { batches: 1, min_queries: 5, min_duration_ns: 0 });
    expect(cpusOf(process.pid)).toBe(CLIENT_CPUS);
    expect(cpusOf(pid)).not.toBe(before);
  });

  it('places nothing beside a runtime that pins no thread', async () => {
    const client = await pollingWorker({});
    expect(cpusOf(process.pid)).toBe(CLIENT_CPUS);
    expect(cpusOf(client.pid!)).toBe(CLIENT_CPUS);
  });

  it('gives the client its CPUs back when the worker dies while placed', async () => {
    const client = await pollingWorker({ pinned_thread: true });
    expect(cpusOf(process.pid)).not.toBe(CLIENT_CPUS);
    client.kill('test: killed while placed');
    await client.exited;
    expect(cpusOf(process.pid)).toBe(CLIENT_CPUS);
  });
});
