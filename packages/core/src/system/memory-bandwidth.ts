/**
 * The machine's memory bandwidth as PBH measures it: one thread copying a buffer far larger than any cache (memcpy
 * through Buffer.copy), best of several passes, counting the bytes read and written. One thread is what one decode
 * step of a small model streams its weights with; a many-core machine's aggregate bandwidth is higher, and the
 * method says so wherever the figure is shown.
 */
export interface MemoryBandwidth {
  bytes_per_s: number;
  method: string;
}

const SIZE = 256 * 1024 * 1024;
const PASSES = 5;
let measured: MemoryBandwidth | null = null;

export function memoryBandwidth(): MemoryBandwidth {
  if (measured) return measured;
  const source = Buffer.alloc(SIZE, 1);
  const target = Buffer.alloc(SIZE);
  let best = Infinity;
  for (let i = 0; i < PASSES; i++) {
    const start = process.hrtime.bigint();
    source.copy(target);
    best = Math.min(best, Number(process.hrtime.bigint() - start));
  }
  measured = { bytes_per_s: (2 * SIZE) / (best / 1e9), method: `one thread copying ${SIZE / 2 ** 20} MiB (read + write), best of ${PASSES}` };
  return measured;
}
