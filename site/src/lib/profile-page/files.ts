import { copyFileSync, linkSync, renameSync, writeFileSync } from 'node:fs';
import { copyFile, link, rename } from 'node:fs/promises';
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
    if (!copiesInstead(error)) return;
    const partial = `${at}.${process.pid}.tmp`;
    await copyFile(to, partial);
    await rename(partial, at);
  }
}

/** fileAs on the calling thread: for a page pool's thread, whose only work is its Profiles' files. */
function fileAsNow(to: string, at: string): void {
  try {
    linkSync(to, at);
  } catch (error) {
    if (!copiesInstead(error)) return;
    const partial = `${at}.${process.pid}.tmp`;
    copyFileSync(to, partial);
    renameSync(partial, at);
  }
}

/** Whether a failed link is copied instead (another file system, or no links there); false: the name exists. */
function copiesInstead(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EEXIST') return false;
  if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw error;
  return true;
}

function write({ to, keep }: ProfileFile, body: string | Buffer): void {
  writeFileSync(to, body);
  if (keep) fileAsNow(to, keep);
}

/**
 * Renders and writes what `job` asks for, on a worker thread of pool.ts during a build. The writes block the thread:
 * it has nothing else to do, and each asynchronous write was three round trips through libuv's threads (open, write,
 * close), which on two cores took the worker's core from rendering more than the writes themselves.
 */
export function writeProfileFiles(job: ProfileFilesJob): void {
  if (job.page) write(job.page, profilePageHtml(job.entry, job.runConfig));
  if (job.download) write(job.download, gzipSync(profileDownloadText(job.entry)));
}
