import { parentPort } from 'node:worker_threads';
import { z } from 'zod';
import type { ProfileEntry } from '../data.js';
import { writeProfileFiles } from './files.js';

/**
 * A Profile page pool's thread (pool.ts): writes the pages and downloads it is sent and says when each is done. The
 * entry is the main thread's own, read and checked by core's readSiteData and structured-cloned here, so only the
 * envelope and the fields the files are named by are checked again.
 */
const FileSchema = z.object({ to: z.string(), keep: z.string().nullable() }).nullable();
const JobSchema = z.object({
  entry: z.looseObject({ slug: z.string(), profile_id: z.string(), profile: z.looseObject({}) }),
  runConfig: z.string(),
  page: FileSchema,
  download: FileSchema,
});
const EnvelopeSchema = z.object({ id: z.number(), job: z.unknown() });

if (!parentPort) throw new Error('worker.ts runs as a worker thread of the site build (profile-page/pool.ts), not on its own.');
const port = parentPort;

port.on('message', (message: unknown) => {
  const { id, job } = EnvelopeSchema.parse(message);
  try {
    const checked = JobSchema.parse(job);
    writeProfileFiles({ ...checked, entry: checked.entry as unknown as ProfileEntry });
    port.postMessage({ id, done: true });
  } catch (error) {
    const profile = (job as { entry?: { profile_id?: unknown } } | null)?.entry?.profile_id;
    port.postMessage({ id, error: `Profile ${String(profile)}'s page failed on a worker thread: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}` });
  }
});
