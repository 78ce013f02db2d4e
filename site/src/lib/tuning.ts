import type { ProfileEntry } from './data.js';

/**
 * Whether a TVM Profile's kernels were tuned: untuned TVM runs TOPI's default loop nests, with no schedules, often
 * tens of times slower than tuned, so a row never leaves a reader to guess (facts.tune, from the worker; the
 * entry's options where an older Profile lacks it). Null for every other engine.
 */
export function tuningOf(p: Pick<ProfileEntry, 'engine_name' | 'profile'>): 'tuned' | 'untuned' | null {
  if (p.engine_name !== 'tvm') return null;
  const facts = p.profile.engine.facts as Record<string, unknown> | null | undefined;
  const options = p.profile.engine.options as Record<string, unknown> | null | undefined;
  const tune = typeof facts?.['tune'] === 'boolean' ? facts['tune'] : options?.['tune'] === true;
  return tune ? 'tuned' : 'untuned';
}
