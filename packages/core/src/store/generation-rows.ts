import type { Profile } from '../contracts/profile.js';
import type { Row } from './profile-rows.js';

const ms = (ns: number): number => ns / 1e6;

/** The generation table's row of a Profile with a generate workload's figures; null for every other Profile. */
export function generationRow(profile: Profile): Row | null {
  const g = profile.generation;
  if (!g) return null;
  return {
    profile_id: profile.profile_id,
    scenario: g.scenario,
    requests: g.requests,
    max_new_tokens: g.max_new_tokens,
    concurrency: g.concurrency,
    request_rate: g.request_rate,
    prompt_tokens_mean: g.prompt_tokens.mean,
    ttft_p50_ms: ms(g.ttft.p50),
    ttft_p90_ms: ms(g.ttft.p90),
    ttft_p99_ms: ms(g.ttft.p99),
    itl_p50_ms: ms(g.itl.p50),
    itl_p90_ms: ms(g.itl.p90),
    itl_p99_ms: ms(g.itl.p99),
    tpot_p50_ms: ms(g.tpot.p50),
    tpot_p99_ms: ms(g.tpot.p99),
    e2e_p50_ms: ms(g.e2e.p50),
    e2e_p99_ms: ms(g.e2e.p99),
    output_tokens: g.output_tokens,
    output_tokens_per_s: g.output_tokens_per_s,
    total_tokens_per_s: g.total_tokens_per_s,
    request_throughput: g.request_throughput,
    slo_ttft_ms: g.slo?.ttft_ms ?? null,
    slo_itl_ms: g.slo?.itl_ms ?? null,
    goodput_rps: g.goodput_rps,
    good_requests: g.good_requests,
    kv_cache_bytes: g.kv_cache_bytes,
    kv_cache_bytes_in_flight: g.kv_cache_bytes_in_flight,
    perplexity: g.perplexity?.perplexity ?? null,
    nll_nats: g.perplexity?.nll_nats ?? null,
    gate_passed: g.gate?.passed ?? null,
    tpot_p90_ms: ms(g.tpot.p90),
    e2e_p90_ms: ms(g.e2e.p90),
    bits_per_byte: g.perplexity?.bits_per_byte ?? null,
    tokenizer: g.tokenizer ? (g.tokenizer.path ?? g.tokenizer.kind) : null,
    tokenizer_sha256: g.tokenizer?.sha256 ?? null,
    prompt_source: g.prompt_source,
    model_layout: g.model_layout,
    served: g.served,
    runtime_reported: g.runtime_reported ? JSON.stringify(g.runtime_reported) : null,
    prefill_flops_per_s: g.roofline?.prefill?.flops_per_s ?? null,
    prefill_share_of_peak: g.roofline?.prefill?.share_of_peak ?? null,
    decode_bytes_per_s: g.roofline?.decode.bytes_per_s ?? null,
    decode_share_of_bandwidth: g.roofline?.decode.share_of_bandwidth ?? null,
  };
}
