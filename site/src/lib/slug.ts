import { createHash } from 'node:crypto';

const SAFE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * A file name for a database string (model, engine, series, profile id). Safe lower-case names are
 * kept; anything else (spaces, upper case, `<script>`) becomes a cleaned prefix plus a hash of the
 * exact name, so distinct names never share a page and no name can escape its folder.
 */
export function slugFor(name: string): string {
  if (SAFE.test(name)) return name;
  const base = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '')
    .slice(0, 40);
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return base ? `${base}-${hash}` : hash;
}
