import { copyFile, rename } from 'node:fs/promises';

/**
 * Runs `work` over `items`, at most `limit` at once: file copies, writes and gzip run on libuv's thread pool, so a
 * few in flight keep it busy while the main thread goes on.
 */
export async function inFlight<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/** Copies `from` to `to`, written aside and renamed: a build killed mid-copy leaves no half file under `to`. */
export async function keepCopy(from: string, to: string): Promise<void> {
  const partial = `${to}.${process.pid}.tmp`;
  await copyFile(from, partial);
  await rename(partial, to);
}
