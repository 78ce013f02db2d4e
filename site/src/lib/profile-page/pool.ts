import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';

/**
 * Charts drawn on worker threads while the main thread renders pages: Observable Plot with linkedom costs a few
 * milliseconds a chart, on one core, and a cold build of 10,000 Profile pages draws 10,000 ECDFs. The build
 * integration bundles `chart-worker.ts` and names the file in PBH_SITE_CHART_WORKER; without it (astro dev, unit
 * tests) or with PBH_SITE_CHART_THREADS=0, charts are drawn in the calling thread as before.
 */
export interface ChartPool {
  /** The markup of chart `kind` (a name in `drawings.ts`) for `input`, drawn by whichever worker is least busy. */
  draw(kind: string, input: unknown): Promise<string>;
}

const ReplySchema = z.union([z.object({ id: z.number(), svg: z.string() }), z.object({ id: z.number(), error: z.string() })]);

interface Pending {
  resolve: (svg: string) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Why the worker stopped: every later chart fails with it instead of waiting for a thread that is gone. */
  failed?: Error;
}

function threadCount(): number {
  const setting = process.env.PBH_SITE_CHART_THREADS;
  if (setting !== undefined && setting !== '') {
    const n = Number(setting);
    if (!Number.isInteger(n) || n < 0) throw new Error(`PBH_SITE_CHART_THREADS is ${setting}: give a whole number of threads (0 draws charts on the main thread).`);
    return n;
  }
  return availableParallelism();
}

function startThread(file: string): Thread {
  const thread: Thread = { worker: new Worker(file), pending: new Map() };
  const fail = (error: Error): void => {
    thread.failed ??= error;
    for (const job of thread.pending.values()) job.reject(error);
    thread.pending.clear();
  };
  thread.worker.on('message', (message: unknown) => {
    const reply = ReplySchema.parse(message);
    const job = thread.pending.get(reply.id);
    thread.pending.delete(reply.id);
    if (thread.pending.size === 0) thread.worker.unref();
    if ('svg' in reply) job?.resolve(reply.svg);
    else job?.reject(new Error(reply.error));
  });
  thread.worker.on('error', fail);
  thread.worker.on('exit', (code) => fail(new Error(`The chart worker ${file} exited (status ${code}) with charts still to draw.`)));
  // An idle worker must not keep the build's process alive once the pages are done.
  thread.worker.unref();
  return thread;
}

let pool: ChartPool | null | undefined;

/** The build's one pool, or null where charts are drawn in the calling thread. */
export function chartPool(): ChartPool | null {
  if (pool !== undefined) return pool;
  const file = process.env.PBH_SITE_CHART_WORKER;
  const count = threadCount();
  if (!file || count === 0) return (pool = null);
  const threads = Array.from({ length: count }, () => startThread(file));
  let next = 0;
  pool = {
    draw(kind, input) {
      const thread = threads.reduce((least, t) => (t.pending.size < least.pending.size ? t : least));
      const id = next++;
      return new Promise<string>((resolve, reject) => {
        if (thread.failed) {
          reject(thread.failed);
          return;
        }
        if (thread.pending.size === 0) thread.worker.ref();
        thread.pending.set(id, { resolve, reject });
        thread.worker.postMessage({ id, kind, input });
      });
    },
  };
  return pool;
}
