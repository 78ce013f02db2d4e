import { constants } from 'node:buffer';
import type { Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { DatasetError } from './errors.js';

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'directory';
  if (info.isFIFO()) return 'FIFO (named pipe)';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'device';
  if (info.isSocket()) return 'socket';
  return 'special file';
}

/**
 * A dataset file's bytes, read only once it is known to be a regular file of a size one read can hold: a device
 * (/dev/zero) is read without end and a FIFO blocks the run, holding the database lock. `unreadable` is the message
 * for a file that is missing or cannot be read; it names the config field and what to do.
 */
export async function readDatasetFile(file: string, unreadable: string): Promise<Buffer> {
  let info: Stats;
  try {
    info = await stat(file);
  } catch {
    throw new DatasetError(unreadable);
  }
  if (!info.isFile()) throw new DatasetError(`dataset file ${file} is a ${kindOf(info)}, not a regular file: point the config's dataset paths at the data files themselves.`);
  if (info.size > constants.MAX_LENGTH) {
    throw new DatasetError(`dataset file ${file} is ${info.size} bytes, more than one read can hold (${constants.MAX_LENGTH}): split it, or set dataset.limit on a smaller file.`);
  }
  try {
    return await readFile(file);
  } catch {
    throw new DatasetError(unreadable);
  }
}
