import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { writeProfileFiles, type ProfileFilesJob } from './files.js';

/**
 * Profile pages and downloads written on worker threads, one per core, beside the build's main thread: drawing a
 * Profile's ECDF, rendering its page and compressing its download is per-Profile work (~1 ms) that needs nothing but
 * the Profile, and as Astro routes 10,000 of them kept the main thread busy for most of the build.
 * The build integration bundles `worker.ts` and names the file in PBH_SITE_PAGE_WORKER; without it (unit tests) or
 * with PBH_SITE_PAGE_THREADS=0 the files are written in the calling thread.
 */
export interface ProfileFilesPool {
  /** Worker threads (0: the calling thread writes). */
  threads: number;
  write(job: ProfileFilesJob): Promise<void>;
}

const ReplySchema = z.union([z.object({ id: z.number(), done: z.literal(true) }), z.object({ id: z.number(), error: z.string() })]);

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Why the worker stopped: every later job fails with it instead of waiting for a thread that is gone. */
  failed?: Error;
}

function threadCount(): number {
  const setting = process.env.PBH_SITE_PAGE_THREADS;
  if (setting !== undefined && setting !== '') {
    const n = Number(setting);
    if (!Number.isInteger(n) || n < 0) throw new Error(`PBH_SITE_PAGE_THREADS is ${setting}: give a whole number of threads (0 writes Profile pages on the main thread).`);
    return n;
  }
  return availableParallelism();
}

/**
 * A young generation of 192 MB (semi-spaces of 64): when every Profile page's chart was a whole Plot figure in a DOM,
 * V8's default (16 MB semi-spaces) made scavenges a third of a page's time. With the chart's frame kept
 * (charts/framed.ts) a page allocates far less; the size was not measured again since.
 */
const YOUNG_GENERATION_MB = 192;

function startThread(file: string): Thread {
  const thread: Thread = { worker: new Worker(file, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } }), pending: new Map() };
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
    if ('done' in reply) job?.resolve();
    else job?.reject(new Error(reply.error));
  });
  thread.worker.on('error', fail);
  thread.worker.on('exit', (code) => fail(new Error(`The Profile page worker ${file} exited (status ${code}) with pages still to write.`)));
  // An idle worker must not keep the build's process alive once the pages are done.
  thread.worker.unref();
  return thread;
}

/** A pool of `count` threads running `file`, each job sent to the thread with the fewest in flight. */
function startPool(file: string, count: number): ProfileFilesPool {
  const threads = Array.from({ length: count }, () => startThread(file));
  let next = 0;
  return {
    threads: count,
    write(job) {
      const thread = threads.reduce((least, t) => (t.pending.size < least.pending.size ? t : least));
      const id = next++;
      return new Promise<void>((resolve, reject) => {
        if (thread.failed) {
          reject(thread.failed);
          return;
        }
        if (thread.pending.size === 0) thread.worker.ref();
        thread.pending.set(id, { resolve, reject });
        thread.worker.postMessage({ id, job });
      });
    },
  };
}

let pool: ProfileFilesPool | undefined;

/** The build's one pool, or one that writes in the calling thread where there are no workers. */
export function profileFilesPool(): ProfileFilesPool {
  if (pool) return pool;
  const file = process.env.PBH_SITE_PAGE_WORKER;
  const count = threadCount();
  pool = file && count > 0 ? startPool(file, count) : { threads: 0, write: async (job) => writeProfileFiles(job) };
  return pool;
}
