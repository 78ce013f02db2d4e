/**
 * Runs `work` over `items`, at most `limit` at once: file copies, writes and gzip run on libuv's thread pool (and
 * Profile pages on the page pool's threads), so a few in flight keep them busy while the main thread goes on.
 */
export async function inFlight<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}
