import { copyFile, link, rename, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import type { ProfileEntry } from '../data.js';
import { profileDownloadText, profilePageHtml } from './page.js';

/** One file of a Profile to write: where in the site, and where the page cache keeps it (null: not kept). */
export interface ProfileFile {
  to: string;
  keep: string | null;
}

/** What one Profile needs written: its page and its JSON download, each only where no earlier build kept it. */
export interface ProfileFilesJob {
  entry: ProfileEntry;
  runConfig: string;
  page: ProfileFile | null;
  download: ProfileFile | null;
}

/**
 * `to`'s bytes filed at `at` too: a hard link where both are on one file system (the bytes once, and the name appears
 * whole, so a build killed meanwhile leaves no half file), else a copy written aside and renamed. A name another
 * build filed meanwhile is the same bytes (the key hashes everything the file is made from): it is left.
 */
export async function fileAs(to: string, at: string): Promise<void> {
  try {
    await link(to, at);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw error;
    const partial = `${at}.${process.pid}.tmp`;
    await copyFile(to, partial);
    await rename(partial, at);
  }
}

async function write({ to, keep }: ProfileFile, body: string | Buffer): Promise<void> {
  await writeFile(to, body);
  if (keep) await fileAs(to, keep);
}

/**
 * Renders and writes what `job` asks for (on a worker thread of pool.ts during a build). The rendering runs at once;
 * the writes go on libuv's threads while the worker renders its next job.
 */
export async function writeProfileFiles(job: ProfileFilesJob): Promise<void> {
  await Promise.all([
    job.page && write(job.page, profilePageHtml(job.entry, job.runConfig)),
    job.download && write(job.download, gzipSync(profileDownloadText(job.entry))),
  ]);
}
