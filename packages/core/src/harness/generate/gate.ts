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

/** Ranks a lower-precision engine's logits may give a reference token and still pass (top-5 agreement). */
export const GATE_TOP_K = 5;

/** exact for an engine that executes in fp32 or fp64 on uncompressed weights (or that gives no logits to rank), top_k otherwise. */
export function gateRule(executed: string, weights: string | null, canRank: boolean): 'exact' | 'top_k' {
  return (executed === 'fp32' || executed === 'fp64') && !weights ? 'exact' : canRank ? 'top_k' : 'exact';
}

export interface RankFailure {
  request: number;
  position: number;
  token: number;
  rank: number;
}

/** The worst rank over every request's continuation, and the first position ranked at k or beyond. */
export function judgeRanks(ranks: number[][], expected: number[][], k: number): { worst: number; failure: RankFailure | null } {
  let worst = 0;
  let failure: RankFailure | null = null;
  ranks.forEach((row, request) =>
    row.forEach((rank, position) => {
      worst = Math.max(worst, rank);
      if (rank >= k && failure === null) failure = { request, position, token: expected[request]![position]!, rank };
    }),
  );
  return { worst, failure };
}

export function describeRankFailure(f: RankFailure, reference: string, engine: string, executed: string, k: number): string {
  return `fed ${reference}'s greedy continuation of prompt ${f.request}, ${engine} (${executed}) ranks its token ${f.position} (id ${f.token}) ${f.rank + 1}th; an engine below fp32 must rank every reference token within its top ${k}`;
}
