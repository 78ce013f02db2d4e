import type { Scrub } from './scrub.js';

/**
 * A JSON object (engine options, engine facts) as rows of a two-column table: nested objects flatten to dotted keys
 * (`requested.hint`), arrays of scalars join with commas, every value text with its paths scrubbed.
 */
export function keyValueRows(value: unknown, scrub: Scrub, prefix = ''): { key: string; value: string }[] {
  if (value === null || typeof value !== 'object') return prefix === '' ? [] : [{ key: prefix, value: scrub(String(value)) }];
  if (Array.isArray(value)) {
    const scalar = value.every((v) => v === null || typeof v !== 'object');
    if (scalar) return [{ key: prefix || '(list)', value: scrub(value.map(String).join(', ')) }];
    return value.flatMap((v, i) => keyValueRows(v, scrub, `${prefix}[${i}]`));
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return prefix === '' ? [] : [{ key: prefix, value: '(none)' }];
  return entries.flatMap(([k, v]) => {
    const key = prefix === '' ? k : `${prefix}.${k}`;
    return v !== null && typeof v === 'object' ? keyValueRows(v, scrub, key) : [{ key, value: scrub(String(v)) }];
  });
}
