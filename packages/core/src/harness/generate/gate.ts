import type { GenerationResult } from '../../contracts/generation.js';

export type Divergence = NonNullable<NonNullable<GenerationResult['gate']>['first_divergence']>;

/**
 * The correctness gate of generation: greedy continuations must match the reference engine's token for token.
 * Returns the first request and position where they differ (a shorter continuation differs at its end, got = -1).
 */
export function firstDivergence(expected: number[][], got: number[][]): Divergence | null {
  for (let r = 0; r < expected.length; r++) {
    const want = expected[r]!;
    const have = got[r] ?? [];
    for (let p = 0; p < want.length; p++) {
      if (want[p] !== have[p]) return { request: r, position: p, expected: want[p]!, got: have[p] ?? -1 };
    }
  }
  return null;
}

export function describeDivergence(d: Divergence, reference: string, engine: string): string {
  return `greedy continuation of prompt ${d.request} differs from ${reference}'s at generated token ${d.position}: ${reference} chose ${d.expected}, ${engine} chose ${d.got}`;
}
