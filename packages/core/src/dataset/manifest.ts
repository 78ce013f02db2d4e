import { createHash } from 'node:crypto';

/** sha256 over (name, sha256 of bytes) pairs in order: identifies exactly which data a Profile measured. */
export function manifestHash(entries: { name: string; bytes: Uint8Array }[]): string {
  const h = createHash('sha256');
  for (const e of entries) h.update(`${e.name}\0${createHash('sha256').update(e.bytes).digest('hex')}\n`);
  return h.digest('hex');
}
