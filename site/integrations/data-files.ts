import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { siteData } from '../src/lib/data.js';
import { dataFiles } from '../src/lib/downloads.js';
import { scrubRepo } from '../src/lib/scrub.js';
import { inFlight } from './file-jobs.js';

const gzipAsync = promisify(gzip);

/**
 * Files in flight at once. Compression and writing run on libuv's thread pool, so while one file is gzipped or
 * written the main thread renders the next.
 */
const IN_FLIGHT = 8;

/**
 * Every download under data/ except the Parquet export, the console's database and each Profile's own JSON (written
 * with its page, integrations/profile-pages.ts), straight to the output folder. As Astro endpoints they were a route
 * each, and Astro's per-route work (a Request, a Response read back into a buffer, a log line) cost more than the
 * files themselves. The data comes from the read the pages make (siteData() is shared within the build process).
 */
export async function writeDataFiles(outDir: string): Promise<number> {
  const jobs = dataFiles(await siteData());
  const folders = new Set(jobs.map((f) => path.dirname(path.join(outDir, f.path))));
  for (const folder of folders) await mkdir(folder, { recursive: true });
  await inFlight(jobs, IN_FLIGHT, async (job) => {
    // Downloads carry no local path, as the pages do (lib/scrub.ts): relative to the repository, else shortened.
    const text = scrubRepo(job.render());
    await writeFile(path.join(outDir, job.path), job.path.endsWith('.gz') ? await gzipAsync(text) : text);
  });
  return jobs.length;
}
