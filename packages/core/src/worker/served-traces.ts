import type { GenerationTrace } from '../contracts/generation.js';
import type { NamedTensor } from './framing.js';
import type { z } from 'zod';
import type { generateReplySchema } from './protocol.js';

type GenerateReply = z.infer<typeof generateReplySchema>;

function column(tensors: NamedTensor[], name: string, length: number | null, engine: string): number[] {
  const tensor = tensors.find((t) => t.name === name);
  if (!tensor || tensor.dtype !== 'int64' || tensor.dims.length !== 1 || (length !== null && tensor.dims[0] !== length)) {
    const got = tensor ? `${tensor.dtype}[${tensor.dims.join(',')}]` : 'nothing';
    throw new Error(`${engine} worker answered ${name} as ${got}, expected int64[${length ?? 'n'}]`);
  }
  return Array.from(tensor.data as BigInt64Array, Number);
}

/** Cuts a flat column into per-request runs of the given lengths, checking they add up. */
function runs(flat: number[], counts: number[], name: string, engine: string): number[][] {
  const total = counts.reduce((a, c) => a + c, 0);
  if (total !== flat.length) throw new Error(`${engine} worker answered ${flat.length} ${name} for counts summing to ${total}`);
  let at = 0;
  return counts.map((c) => flat.slice(at, (at += c)));
}

/**
 * A `generate` reply from a server's client (capability serve): per request its scheduled arrival, its output tokens
 * (ids, or -1 where only counted) and each streamed chunk's arrival; the two differ in number, a chunk may hold several.
 */
export function servedTraces(reply: { header: GenerateReply; tensors: NamedTensor[] }, n: number, engine: string): GenerationTrace[] {
  const { tensors, header } = reply;
  const arrival = column(tensors, 'arrival_ns', n, engine);
  const tokens = runs(column(tensors, 'tokens', null, engine), column(tensors, 'token_counts', n, engine), 'tokens', engine);
  const chunks = runs(column(tensors, 'token_ns', null, engine), column(tensors, 'chunk_counts', n, engine), 'chunk times', engine);
  const limitNs = header.issue?.late_threshold_ns ?? 0;
  return arrival.map((arrivalNs, r) => {
    const runtime = header.runtime_figures?.[r];
    return {
      arrivalNs,
      tokens: tokens[r]!,
      tokenNs: chunks[r]!,
      ...(runtime ? { runtime } : {}),
      tokenCount: header.token_count ?? 'chunks',
      issue: { lateNs: (runtime?.issue_late_ms ?? 0) * 1e6, limitNs },
    };
  });
}
