/**
 * Schema v4: a `generate` workload's figures (contracts/generation.ts), one row per Profile that has them, and the
 * leaderboard with its generative columns. Times in ms, rates per second.
 */
export const GENERATION_TABLE = `CREATE TABLE generation (
  profile_id VARCHAR PRIMARY KEY,
  scenario VARCHAR NOT NULL,
  requests INTEGER NOT NULL,
  max_new_tokens INTEGER NOT NULL,
  concurrency INTEGER NOT NULL,
  request_rate DOUBLE,
  prompt_tokens_mean DOUBLE,
  ttft_p50_ms DOUBLE, ttft_p90_ms DOUBLE, ttft_p99_ms DOUBLE,
  itl_p50_ms DOUBLE, itl_p90_ms DOUBLE, itl_p99_ms DOUBLE,
  tpot_p50_ms DOUBLE, tpot_p99_ms DOUBLE,
  e2e_p50_ms DOUBLE, e2e_p99_ms DOUBLE,
  output_tokens BIGINT NOT NULL,
  output_tokens_per_s DOUBLE,
  total_tokens_per_s DOUBLE,
  request_throughput DOUBLE,
  slo_ttft_ms DOUBLE,
  slo_itl_ms DOUBLE,
  goodput_rps DOUBLE,
  good_requests INTEGER,
  kv_cache_bytes BIGINT,
  kv_cache_bytes_in_flight BIGINT,
  perplexity DOUBLE,
  nll_nats DOUBLE,
  gate_passed BOOLEAN
)`;

/** Schema v6: what real LLMs add (a tokenizer of their own, bits per byte across tokenizers, p90s). */
export const GENERATION_V6_COLUMNS = ['tpot_p90_ms DOUBLE', 'e2e_p90_ms DOUBLE', 'bits_per_byte DOUBLE', 'tokenizer VARCHAR', 'tokenizer_sha256 VARCHAR', 'prompt_source VARCHAR', 'model_layout VARCHAR', 'served VARCHAR', 'runtime_reported JSON', 'prefill_flops_per_s DOUBLE', 'prefill_share_of_peak DOUBLE', 'decode_bytes_per_s DOUBLE', 'decode_share_of_bandwidth DOUBLE'];

const GENERATIVE_COLUMNS = `  g.ttft_p50_ms,
  g.ttft_p99_ms,
  g.itl_p50_ms,
  g.itl_p99_ms,
  g.output_tokens_per_s,
  g.total_tokens_per_s,
  g.goodput_rps,
  g.perplexity,
`;

function inserted(view: string, anchor: string, text: string, before: boolean): string {
  if (!view.includes(anchor)) throw new Error(`store migration v4: the v3 leaderboard has no "${anchor}" to extend`);
  return view.replace(anchor, before ? text + anchor : anchor + text);
}

/** v3's leaderboard plus the generative columns (null for every other Profile), from the generation table. */
export function generativeLeaderboard(v3: string): string {
  const withColumns = inserted(v3, '  p.peak_rss_mb,\n', GENERATIVE_COLUMNS, true);
  return inserted(withColumns, "WHERE p.status = 'ok'", 'LEFT JOIN generation g ON g.profile_id = p.profile_id\n', true);
}
