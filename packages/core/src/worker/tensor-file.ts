import { unlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { NamedTensor } from './framing.js';

/**
 * A request's tensor bytes in a file under /dev/shm instead of on the frame stream (`bytes_file` in its header; the
 * worker's side: `pbh_worker/channel.py`). The stream is a socket whose small buffer wakes both processes every
 * ~200 KB: 64 MiB of resident batches moved at 0.25-1.2 GB/s through it here, against ~2 GB/s for one `writev` into
 * tmpfs, which the worker maps in place instead of copying.
 *
 * Layout: each tensor at the next multiple of TENSOR_ALIGN after the previous one's end, the first at 0; the same
 * offsets the worker gives tensors read from the stream.
 */
const TENSOR_ALIGN = 64;
/** Where tensor files go (none where it is missing); only a memory-backed folder is faster than the stream. */
const FOLDER = '/dev/shm';
export const TENSOR_FILE_PREFIX = 'pbh-tensors-';
// Linux's IOV_MAX: one writev takes at most this many pieces.
const IOV_MAX = 1024;
const PADDING = new Uint8Array(TENSOR_ALIGN);
// One write call moves at most about this much.
const SLICE_BYTES = 64 << 20;
let made = 0;

/**
 * Writes the tensors' bytes into a fresh file and resolves with its path, or with undefined where none could be
 * written (no /dev/shm, or it is full: a container's default is 64 MB): the caller then sends them on the stream.
 * The writes run on libuv's pool, a slice at a time, so a performance set of gigabytes does not hold the event loop.
 */
export async function writeTensorFile(tensors: readonly NamedTensor[]): Promise<string | undefined> {
  const path = join(FOLDER, `${TENSOR_FILE_PREFIX}${process.pid}-${++made}`);
  let file: FileHandle;
  try {
    file = await open(path, 'wx', 0o600);
  } catch {
    return undefined;
  }
  try {
    let pieces: Uint8Array[] = [];
    let position = 0;
    let pending = 0;
    const flush = async (): Promise<void> => {
      if (pieces.length === 0) return;
      const { bytesWritten } = await file.writev(pieces, position);
      if (bytesWritten !== pending) throw new Error(`short write: ${bytesWritten} of ${pending} bytes`);
      position += pending;
      pieces = [];
      pending = 0;
    };
    for (const t of tensors) {
      const gap = -(position + pending) & (TENSOR_ALIGN - 1);
      if (gap) {
        pieces.push(PADDING.subarray(0, gap));
        pending += gap;
      }
      if (t.data.byteLength > 0) {
        pieces.push(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
        pending += t.data.byteLength;
      }
      if (pieces.length >= IOV_MAX - 1 || pending >= SLICE_BYTES) await flush();
    }
    await flush();
    await file.close();
    return path;
  } catch {
    await file.close().catch(() => undefined);
    removeTensorFile(path);
    return undefined;
  }
}

/** The worker unlinks a file once it has mapped it; this covers a worker that died or refused the request first. */
export function removeTensorFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: the worker took it.
  }
}
