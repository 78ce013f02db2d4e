import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { siteData } from '../src/lib/data.js';
import { dataFiles, profileDownload, type DataFile } from '../src/lib/downloads.js';
import { planProfilePages } from '../src/lib/profile-page/cache.js';
import { inFlight, keepCopy } from './file-jobs.js';

const gzipAsync = promisify(gzip);

/**
 * Files in flight at once. Compression and writing run on libuv's thread pool, so while one file is gzipped or
 * written the main thread renders the next: the second core does the compression.
 */
const IN_FLIGHT = 8;

/** One file to write: rendered here, or copied from the page cache where an earlier build kept it. */
type Job = DataFile & { keptAt?: string; keepAt?: string };

/**
 * Every download under data/ (except the Parquet export and the console's database), written straight to the
 * output folder. As Astro endpoints they were a route each, 20,000 at 10,000 Profiles, and Astro's per-route work (a
 * Request, a Response read back into a buffer, a log line) cost more than the files themselves. The data comes from
 * the read the pages make (siteData() is shared within the build process). A Profile's own JSON is filed in the
 * page cache under its page's key (lib/profile-page/cache.ts): a rebuild copies it instead of writing it again.
 */
export async function writeDataFiles(outDir: string): Promise<number> {
  const data = await siteData();
  const plan = planProfilePages(data);
  const jobs: Job[] = [
    ...dataFiles(data),
    ...data.profiles.map((entry) => {
      const file = profileDownload(entry);
      const kept = plan?.bySlug.get(entry.slug);
      if (!plan || !kept) return file;
      const at = path.join(plan.folder, `${kept.key}.json.gz`);
      return kept.downloadKept ? { ...file, keptAt: at } : { ...file, keepAt: at };
    }),
  ];
  const folders = new Set(jobs.map((f) => path.dirname(path.join(outDir, f.path))));
  for (const folder of folders) await mkdir(folder, { recursive: true });
  if (plan) await mkdir(plan.folder, { recursive: true });
  await inFlight(jobs, IN_FLIGHT, async (job) => {
    const target = path.join(outDir, job.path);
    if (job.keptAt) {
      await copyFile(job.keptAt, target);
      return;
    }
    const text = job.render();
    const body = job.path.endsWith('.gz') ? await gzipAsync(text) : text;
    await writeFile(target, body);
    if (job.keepAt) await keepCopy(target, job.keepAt);
  });
  return jobs.length;
}
