import { z } from 'zod';
import { StatsSchema } from './stats.js';

/**
 * PBH's contract for a generative model: one ONNX graph with a fixed-capacity key-value cache, run for the prompt
 * (prefill: every prompt token at once) and then once per new token (decode). The bundled byte LM
 * (python/generate_lm.py) has exactly these names.
 *
 *   input_ids   int64 [1, sequence]   new tokens
 *   past_length int64 [1]             tokens already in the cache (the new ones take the next positions)
 *   past_key, past_value              float32 [layers, heads, capacity, head_dim]
 *   -> logits [1, sequence, vocab], present_key, present_value (same shape as past_*)
 */
export const LM_IO = {
  inputIds: 'input_ids',
  pastLength: 'past_length',
  pastKey: 'past_key',
  pastValue: 'past_value',
  logits: 'logits',
  presentKey: 'present_key',
  presentValue: 'present_value',
} as const;

/** A generation schedule: requests (prompt token ids), greedy decoding to max_new_tokens, arrivals, a concurrency cap. */
export interface GenerationSchedule {
  prompts: number[][];
  maxNewTokens: number;
  /** When each request arrives, ns after the start; null: closed loop (each request arrives when a slot is free). */
  arrivalsNs: number[] | null;
  /** Requests in flight at most; their prefill and decode steps interleave, prefills first. */
  concurrency: number;
  /** PBH's cache graph: one request's cache [layers, heads, capacity, head_dim]; null for a Hugging Face decoder, whose cache grows. */
  cacheShape: number[] | null;
  /** The prompts' text, one per prompt: what a server (capability serve) is sent; its tokenizer makes its own ids. */
  promptTexts?: string[];
}

/** How a server's output tokens were counted: the model's tokenizer.json, the server's usage block, or one per streamed chunk. */
export const TokenCountSchema = z.enum(['tokenizer', 'server_usage', 'chunks']);

/** Per request, on the clock of the process that ran the loop, ns after the schedule's start. */
export interface GenerationTrace {
  arrivalNs: number;
  /** Generated token ids (greedy), max_new_tokens of them. */
  tokens: number[];
  /** When each generated token was available: [0] is the prefill's (first token), then one per decode step. */
  tokenNs: number[];
  /** The runtime's own figures for this request (e.g. OpenVINO GenAI's ttft_ms, tpot_ms), where it reports them. */
  runtime?: Record<string, number>;
  /** A server's request: how its output tokens were counted (their ids are -1 where only counted). */
  tokenCount?: z.infer<typeof TokenCountSchema>;
  /** A server's or batching runtime's request on a schedule: ns from when it could go (its arrival, or the slot it waited for) to when it was sent or added, and the limit. */
  issue?: { lateNs: number; limitNs: number };
}

export interface TextScore {
  /** Sum of -ln p(next byte) over every predicted position. */
  nllSum: number;
  predicted: number;
}

/** The tokenizer a generate cell's ids came from, as the Profile records it. */
export const TokenizerFactsSchema = z.object({
  /** "tokenizer.json": the model's own, read by Hugging Face tokenizers; "bytes": UTF-8 bytes (PBH's byte LM). */
  kind: z.enum(['tokenizer.json', 'bytes']),
  path: z.string().nullable(),
  sha256: z.string().nullable(),
  library: z.string().nullable(),
  vocab_size: z.number().int(),
});
export type TokenizerFacts = z.infer<typeof TokenizerFactsSchema>;

const Quantiles = StatsSchema;

export const GenerationRequestSchema = z.object({
  prompt_tokens: z.number().int(),
  output_tokens: z.number().int(),
  arrival_ns: z.number(),
  ttft_ns: z.number(),
  e2e_ns: z.number(),
  /** Gaps between consecutive generated tokens (max_new_tokens - 1 of them). */
  itl_ns: z.array(z.number()),
});

/** What a `generate` workload measured: vLLM `bench serve`'s figures, with input, output and concurrency stated. */
export const GenerationResultSchema = z.object({
  scenario: z.enum(['single_stream', 'server']),
  requests: z.number().int(),
  max_new_tokens: z.number().int(),
  concurrency: z.number().int(),
  /** Server: the Poisson arrival rate in requests/s; null for single stream (closed loop, one at a time). */
  request_rate: z.number().nullable(),
  prompt_tokens: Quantiles,
  /** Latencies in ns. ttft: arrival to first token (queueing + prefill); itl: each gap between tokens; tpot: per request (e2e - ttft) / (tokens - 1). */
  ttft: Quantiles,
  itl: Quantiles,
  tpot: Quantiles,
  e2e: Quantiles,
  output_tokens: z.number().int(),
  output_tokens_per_s: z.number(),
  total_tokens_per_s: z.number(),
  request_throughput: z.number(),
  /** vLLM's goodput: requests/s meeting every SLO (ttft, and each request's tpot for itl_ms); null without SLOs. */
  slo: z.object({ ttft_ms: z.number().nullable(), itl_ms: z.number().nullable() }).nullable(),
  goodput_rps: z.number().nullable(),
  /** Energy per output token: the sessions' joules (profile.energy, its method there) over their output tokens; null when energy was not measured. Absent in older Profiles. */
  joules_per_output_token: z.number().nullable().optional(),
  good_requests: z.number().int().nullable(),
  /** Bytes of one request's key-value cache (PBH's graph: its whole capacity; a Hugging Face decoder: at the longest request's end) and of all in flight at the cap. */
  kv_cache_bytes: z.number().int(),
  kv_cache_bytes_in_flight: z.number().int(),
  /** Perplexity on the held-out text, scored by this engine in windows of the cache's capacity. */
  perplexity: z
    .object({
      nll_nats: z.number(),
      perplexity: z.number(),
      tokens: z.number().int(),
      window: z.number().int(),
      /** A uniform guess over the tokenizer's vocabulary, for scale. */
      uniform_nll_nats: z.number(),
      /** Total surprise in bits over the UTF-8 bytes of the predicted text: comparable across tokenizers. */
      bits_per_byte: z.number().nullable().default(null),
      bytes: z.number().int().nullable().default(null),
    })
    .nullable(),
  /**
   * The correctness gate against the reference engine's greedy continuations. exact: token for token (an engine that
   * executes in fp32); top_k: fed the reference's continuation, the engine ranks each of its tokens within its top k
   * (an engine that executes below fp32, whose argmax may flip on near ties without being wrong).
   */
  gate: z
    .object({
      reference_engine: z.string(),
      prompts: z.number().int(),
      passed: z.boolean(),
      rule: z.enum(['exact', 'top_k']).default('exact'),
      k: z.number().int().nullable().default(null),
      /** top_k: the worst rank any reference token had (0: every one was the engine's argmax). */
      worst_rank: z.number().int().nullable().default(null),
      first_divergence: z.object({ request: z.number().int(), position: z.number().int(), expected: z.number().int(), got: z.number().int() }).nullable(),
    })
    .nullable(),
  /** The tokenizer the ids came from (the model's tokenizer.json, or UTF-8 bytes for PBH's byte LM). */
  tokenizer: TokenizerFactsSchema.nullable().default(null),
  /** The prompts' form: a JSONL file of {"prompt"}, ShareGPT conversations, or seeded random ids. */
  prompt_source: z.enum(['jsonl', 'sharegpt', 'random']).nullable().default(null),
  /** interleaved: PBH's loop stepped every request in flight; one_at_a_time: the runtime's own generate loop served each request whole; batched: the runtime batched the requests in flight itself (continuous batching); server: a server behind a client. */
  served: z.enum(['interleaved', 'one_at_a_time', 'batched', 'server']).nullable().default(null),
  /** A server's output tokens: counted by the model's tokenizer, the server's usage block, or per chunk; null: ids from the runtime. */
  token_count: TokenCountSchema.nullable().default(null),
  /**
   * A server's client: how late it sent requests after they could go (arrival, or a freed slot), ns, over every session.
   * Past limit_ns the client could not keep its schedule and the point is INVALID (profile.scenario says why).
   */
  issue: z.object({ limit_ns: z.number(), max_late_ns: z.number(), p99_late_ns: z.number(), late_requests: z.number().int() }).nullable().default(null),
  /** find_peak on a server: the highest Poisson rate whose TTFT and TPOT p99 met the SLOs (null: none tried did); every rate tried is in profile.scenario.peak_search. */
  capacity: z.object({ rate_rps: z.number().nullable(), points: z.number().int(), percentile: z.number() }).nullable().default(null),
  /** The runtime's own figures (medians over session 0's requests), beside PBH's: e.g. OpenVINO GenAI's perf metrics. */
  runtime_reported: z.record(z.string(), z.number()).nullable().default(null),
  /**
   * Where each phase stands against the machine: prefill as compute (FLOP/s against the executed precision's peak),
   * decode as memory traffic (bytes/s against the bandwidth PBH measured). The approximations are in `method`.
   */
  roofline: z
    .object({
      method: z.string(),
      prefill: z.object({ flops_per_token: z.number(), flops_per_s: z.number(), peak_ops_per_s: z.number().nullable(), share_of_peak: z.number().nullable() }).nullable(),
      decode: z.object({ bytes_per_token: z.number(), bytes_per_s: z.number(), bandwidth_bytes_per_s: z.number(), bandwidth_method: z.string(), share_of_bandwidth: z.number() }),
    })
    .nullable()
    .default(null),
  /** Why perplexity is absent when it was asked for (a runtime that gives no logits). */
  perplexity_unavailable: z.string().nullable().default(null),
  /** The model's cache: PBH's fixed-capacity graph, or the Hugging Face decoder layout (growing, per layer). */
  model_layout: z.enum(['pbh_cache', 'hf_decoder']).nullable().default(null),
  /** Session 0's requests, raw. */
  per_request: z.array(GenerationRequestSchema),
});
export type GenerationResult = z.infer<typeof GenerationResultSchema>;
export type GenerationRequest = z.infer<typeof GenerationRequestSchema>;
