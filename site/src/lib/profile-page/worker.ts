import { parentPort } from 'node:worker_threads';
import { z } from 'zod';
import { DRAWINGS } from './drawings.js';

/**
 * A chart pool's thread (pool.ts): draws the charts it is sent and replies with their markup. The inputs are the
 * main thread's own drawing inputs, structured-cloned; the job's envelope is checked here, the input by the drawing.
 */
const JobSchema = z.object({ id: z.number(), kind: z.string(), input: z.unknown() });

if (!parentPort) throw new Error('chart-worker.ts runs as a worker thread of the site build (charts/pool.ts), not on its own.');
const port = parentPort;

port.on('message', (message: unknown) => {
  const job = JobSchema.parse(message);
  try {
    const draw = DRAWINGS[job.kind];
    if (!draw) throw new Error(`no chart kind ${job.kind} (known: ${Object.keys(DRAWINGS).join(', ')})`);
    port.postMessage({ id: job.id, svg: draw(job.input) });
  } catch (error) {
    port.postMessage({ id: job.id, error: `Chart ${job.kind} failed on a worker thread: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` });
  }
});
