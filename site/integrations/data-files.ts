import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { siteData } from '../src/lib/data.js';
import { dataFiles } from '../src/lib/downloads.js';

const gzipAsync = promisify(gzip);

/**
 * Files in flight at once. Compression and writing run on libuv's thread pool, so while one file is gzipped or
 * written the main thread renders the next: the second core does the compression.
 */
const IN_FLIGHT = 8;

/**
 * Every download under data/ (except the Parquet export and the console's database), written straight to the
 * output folder after the pages. As Astro endpoints they were a route each, 20,000 at 10,000 Profiles, and Astro's
 * per-route work (a Request, a Response read back into a buffer, a log line) cost more than the files themselves.
 * The data comes from the read the pages made (siteData() is shared within the build process).
 */
export async function writeDataFiles(outDir: string): Promise<number> {
  const files = dataFiles(await siteData());
  const folders = new Set(files.map((f) => path.dirname(path.join(outDir, f.path))));
  for (const folder of folders) await mkdir(folder, { recursive: true });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const file = files[next++]!;
      const text = file.render();
      const body = file.path.endsWith('.gz') ? await gzipAsync(text) : text;
      await writeFile(path.join(outDir, file.path), body);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return files.length;
}
