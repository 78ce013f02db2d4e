import type { GenerationRequest, GenerationResult, GenerationTrace } from '../../contracts/generation.js';
import type { SessionResult } from '../../contracts/profile.js';
import type { GenerateConfig } from '../../config/schema.js';
import { summarize } from '../../stats/summary.js';

export interface GenerationSession {
  traces: GenerationTrace[];
  metrics: Record<string, number>;
}

/** One request's figures from its trace: TTFT from arrival (queueing + prefill), each inter-token gap, end to end. */
export function requestFigures(trace: GenerationTrace, promptTokens: number): GenerationRequest {
  const t = trace.tokenNs;
  return {
    prompt_tokens: promptTokens,
    output_tokens: trace.tokens.length,
    arrival_ns: trace.arrivalNs,
    ttft_ns: t[0]! - trace.arrivalNs,
    e2e_ns: t[t.length - 1]! - trace.arrivalNs,
    itl_ns: t.slice(1).map((v, i) => v - t[i]!),
  };
}

/** vLLM's per-request time per output token: the decode time over the tokens after the first. */
function tpotNs(r: GenerationRequest): number {
  return r.output_tokens > 1 ? (r.e2e_ns - r.ttft_ns) / (r.output_tokens - 1) : 0;
}

/** A session lasts from its first arrival to its last token. */
function durationS(requests: GenerationRequest[]): number {
  const start = Math.min(...requests.map((r) => r.arrival_ns));
  const end = Math.max(...requests.map((r) => r.arrival_ns + r.e2e_ns));
  return (end - start) / 1e9;
}

/**
 * vLLM `bench serve`'s goodput: a request is good when it meets every SLO given (ttft against TTFT, itl against
 * its TPOT, vLLM's `tpot` key), counted per second of the session.
 */
function good(r: GenerationRequest, slo: GenerateConfig['slo']): boolean {
  return (slo?.ttft_ms === undefined || r.ttft_ns <= slo.ttft_ms * 1e6) && (slo?.itl_ms === undefined || tpotNs(r) <= slo.itl_ms * 1e6);
}

export interface GenerationFigures {
  result: Omit<GenerationResult, 'perplexity' | 'gate' | 'kv_cache_bytes' | 'kv_cache_bytes_in_flight' | 'tokenizer' | 'prompt_source' | 'model_layout' | 'served' | 'runtime_reported' | 'perplexity_unavailable' | 'roofline' | 'token_count' | 'issue' | 'capacity'>;
  sessions: SessionResult[];
  /** Output tokens per second, per session. */
  throughputs: number[];
  e2eNs: number[];
  /** Each request's end to end as a raw `query` sample (batch = request index), session-major. */
  samples: { session: number; batch: number; boundary: 'query'; ns: number }[];
}

/** Every session's requests pooled for the distributions; rates per session, then their mean. */
export function generationFigures(
  sessions: GenerationSession[],
  prompts: number[][],
  cfg: GenerateConfig,
  scenario: 'single_stream' | 'server',
  concurrency: number,
  requestRate: number | null,
): GenerationFigures {
  const perSession = sessions.map((s) => s.traces.map((t, i) => requestFigures(t, prompts[i]!.length)));
  const all = perSession.flat();
  const mean = (xs: number[]): number => xs.reduce((a, v) => a + v, 0) / Math.max(1, xs.length);
  const rates = perSession.map((reqs) => {
    const s = durationS(reqs);
    const out = reqs.reduce((a, r) => a + r.output_tokens, 0);
    const total = out + reqs.reduce((a, r) => a + r.prompt_tokens, 0);
    const goodCount = reqs.filter((r) => good(r, cfg.slo)).length;
    return { s, out, outPerS: out / s, totalPerS: total / s, reqPerS: reqs.length / s, goodCount, goodPerS: goodCount / s };
  });
  const sessionResults: SessionResult[] = perSession.map((reqs, index) => ({
    index,
    batches: reqs.length,
    samples: reqs.length,
    wall_ns: rates[index]!.s * 1e9,
    throughput_sps: rates[index]!.outPerS,
    latency: { query: summarize(reqs.map((r) => r.e2e_ns)) },
    metrics: sessions[index]!.metrics,
  }));
  const slo = cfg.slo ? { ttft_ms: cfg.slo.ttft_ms ?? null, itl_ms: cfg.slo.itl_ms ?? null } : null;
  return {
    result: {
      scenario,
      requests: perSession[0]?.length ?? 0,
      max_new_tokens: cfg.max_new_tokens,
      concurrency,
      request_rate: requestRate,
      prompt_tokens: summarize(prompts.slice(0, perSession[0]?.length ?? 0).map((p) => p.length)),
      ttft: summarize(all.map((r) => r.ttft_ns)),
      itl: summarize(all.flatMap((r) => r.itl_ns)),
      tpot: summarize(all.map(tpotNs)),
      e2e: summarize(all.map((r) => r.e2e_ns)),
      output_tokens: all.reduce((a, r) => a + r.output_tokens, 0),
      output_tokens_per_s: mean(rates.map((r) => r.outPerS)),
      total_tokens_per_s: mean(rates.map((r) => r.totalPerS)),
      request_throughput: mean(rates.map((r) => r.reqPerS)),
      slo,
      goodput_rps: slo ? mean(rates.map((r) => r.goodPerS)) : null,
      good_requests: slo ? rates.reduce((a, r) => a + r.goodCount, 0) : null,
      per_request: perSession[0] ?? [],
    },
    sessions: sessionResults,
    throughputs: rates.map((r) => r.outPerS),
    e2eNs: all.map((r) => r.e2e_ns),
    samples: perSession.flatMap((reqs, session) => reqs.map((r, batch) => ({ session, batch, boundary: 'query' as const, ns: r.e2e_ns }))),
  };
}
