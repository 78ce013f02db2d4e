import { z } from 'zod';

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** The closest candidate within a distance that still reads as a typo, or undefined. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** Object keys a schema accepts at a path, following arrays, optionals, defaults and unions. */
export function keysAtPath(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const unwrap = (s: z.ZodType): z.ZodType[] => {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) return unwrap(s.unwrap() as z.ZodType);
    if (s instanceof z.ZodDefault) return unwrap(s.unwrap() as z.ZodType);
    if (s instanceof z.ZodUnion || s instanceof z.ZodDiscriminatedUnion) return (s.options as z.ZodType[]).flatMap(unwrap);
    return [s];
  };
  let current = unwrap(schema);
  for (const key of path) {
    current = current.flatMap((s) => {
      if (s instanceof z.ZodArray && typeof key === 'number') return unwrap(s.element as z.ZodType);
      if (s instanceof z.ZodObject && typeof key === 'string' && key in s.shape) return unwrap(s.shape[key] as z.ZodType);
      if (s instanceof z.ZodRecord && typeof key === 'string') return unwrap(s.valueType as z.ZodType);
      return [];
    });
  }
  return [...new Set(current.flatMap((s) => (s instanceof z.ZodObject ? Object.keys(s.shape) : [])))];
}
