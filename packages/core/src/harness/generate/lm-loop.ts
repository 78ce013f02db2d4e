import { LM_IO, type GenerationSchedule, type GenerationTrace, type TextScore } from '../../contracts/generation.js';
import type { Tensor, TensorMap } from '../../contracts/tensor.js';

/** One run of the LM graph (contracts/generation.ts): feeds in, every output back. */
export type LmStep = (feeds: TensorMap) => Promise<TensorMap>;

interface Active {
  index: number;
  past: number;
  key: Float32Array;
  value: Float32Array;
  next: number | null;
}

const hr = process.hrtime.bigint;

function feeds(ids: number[], past: number, key: Float32Array, value: Float32Array, cacheShape: number[]): TensorMap {
  return {
    [LM_IO.inputIds]: { dtype: 'int64', dims: [1, ids.length], data: BigInt64Array.from(ids, (t) => BigInt(t)) },
    [LM_IO.pastLength]: { dtype: 'int64', dims: [1], data: BigInt64Array.of(BigInt(past)) },
    [LM_IO.pastKey]: { dtype: 'float32', dims: cacheShape, data: key },
    [LM_IO.pastValue]: { dtype: 'float32', dims: cacheShape, data: value },
  };
}

function output(out: TensorMap, name: string): Tensor {
  const t = out[name];
  if (!t) throw new Error(`the LM graph returned no "${name}" (it returned ${Object.keys(out).join(', ')}); PBH's generate workload needs the outputs of contracts/generation.ts`);
  return t;
}

/** Greedy choice at the last position of logits [1, sequence, vocab]; ties go to the lowest id, as numpy's argmax. */
export function lastArgmax(logits: Tensor): number {
  const vocab = logits.dims[logits.dims.length - 1]!;
  const data = logits.data as Float32Array;
  const base = data.length - vocab;
  let best = 0;
  for (let i = 1; i < vocab; i++) if (data[base + i]! > data[base + best]!) best = i;
  return best;
}

async function waitUntil(startNs: bigint, dueNs: number): Promise<void> {
  const left = dueNs - Number(hr() - startNs);
  // The timer is coarse (about 1 ms): sleep short of the arrival, then hold the thread for the rest.
  if (left > 2e6) await new Promise((r) => setTimeout(r, (left - 1.5e6) / 1e6));
  while (Number(hr() - startNs) < dueNs);
}

/**
 * Greedy generation of every request of a schedule through `step`, the loop a deployment runs: requests are admitted
 * when they have arrived and a slot is free (at most `concurrency` in flight), and each pass runs the prefills of
 * newly admitted requests first, then one decode step of every other request in flight (vLLM's scheduler without
 * batching: the graph runs one request a call). Times are ns after the start on this process's clock.
 * pbh_worker/generation.py is the same loop for runtimes in a worker; a test holds the two to the same traces.
 * An aborted `signal` (the cell's deadline) stops it between steps, so an abandoned loop does not run on.
 */
export async function runGenerationLoop(step: LmStep, schedule: GenerationSchedule & { cacheShape: number[] }, signal?: AbortSignal): Promise<GenerationTrace[]> {
  const { prompts, maxNewTokens, arrivalsNs, concurrency, cacheShape } = schedule;
  const cacheSize = cacheShape.reduce((a, d) => a * d, 1);
  const traces: GenerationTrace[] = prompts.map(() => ({ arrivalNs: 0, tokens: [], tokenNs: [] }));
  const active: Active[] = [];
  const start = hr();
  const elapsed = (): number => Number(hr() - start);
  let next = 0;
  while (next < prompts.length || active.length > 0) {
    while (active.length < concurrency && next < prompts.length && (arrivalsNs === null || arrivalsNs[next]! <= elapsed())) {
      traces[next]!.arrivalNs = arrivalsNs === null ? elapsed() : arrivalsNs[next]!;
      active.push({ index: next, past: 0, key: new Float32Array(cacheSize), value: new Float32Array(cacheSize), next: null });
      next++;
    }
    if (active.length === 0) {
      await waitUntil(start, arrivalsNs![next]!);
      continue;
    }
    const pass = [...active.filter((a) => a.next === null), ...active.filter((a) => a.next !== null)];
    for (const a of pass) {
      signal?.throwIfAborted();
      const ids = a.next === null ? prompts[a.index]! : [a.next];
      const out = await step(feeds(ids, a.past, a.key, a.value, cacheShape));
      const token = lastArgmax(output(out, LM_IO.logits));
      const trace = traces[a.index]!;
      trace.tokenNs.push(elapsed());
      trace.tokens.push(token);
      a.past += ids.length;
      a.key = output(out, LM_IO.presentKey).data as Float32Array;
      a.value = output(out, LM_IO.presentValue).data as Float32Array;
      a.next = token;
      if (trace.tokens.length >= maxNewTokens) active.splice(active.indexOf(a), 1);
    }
  }
  return traces;
}

/** Sum of -ln softmax(logits)[next] over `tokens` in non-overlapping windows of `window` tokens, each from an empty cache. */
export async function scoreTextWith(step: LmStep, tokens: number[], window: number, cacheShape: number[], signal?: AbortSignal): Promise<TextScore> {
  const cacheSize = cacheShape.reduce((a, d) => a * d, 1);
  let nllSum = 0;
  let predicted = 0;
  for (let s = 0; s + 1 < tokens.length; s += window) {
    signal?.throwIfAborted();
    const chunk = tokens.slice(s, s + window);
    if (chunk.length < 2) break;
    const zeros = new Float32Array(cacheSize);
    const logits = output(await step(feeds(chunk, 0, zeros, zeros, cacheShape)), LM_IO.logits);
    const vocab = logits.dims[logits.dims.length - 1]!;
    const data = logits.data as Float32Array;
    for (let t = 0; t + 1 < chunk.length; t++) {
      let max = -Infinity;
      for (let i = 0; i < vocab; i++) max = Math.max(max, data[t * vocab + i]!);
      let sum = 0;
      for (let i = 0; i < vocab; i++) sum += Math.exp(data[t * vocab + i]! - max);
      nllSum += Math.log(sum) + max - data[t * vocab + chunk[t + 1]!]!;
      predicted++;
    }
  }
  return { nllSum, predicted };
}
