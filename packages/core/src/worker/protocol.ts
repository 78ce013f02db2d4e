import { z } from 'zod';
import { PrecisionSchema } from '../contracts/precision.js';
import { LayerTimingSchema } from '../contracts/profile.js';
import { DTypeSchema, TensorSpecSchema } from '../contracts/tensor.js';

/**
 * Version announced by `hello`; bump when a frame or command changes incompatibly.
 * 2: `load` carries the precision to execute and its reply what was executed (a v1 worker would ignore the request).
 * 3: `load_samples` and `run` (resident batches timed in the worker); request headers carry `tensors` only when
 *    they have some.
 * 4: `run_closed_loop` and `run_schedule` (whole sessions and schedules in the worker); `load` answers
 *    `max_concurrency`.
 * 5: `generate` and `score_text` (a language model's decode loop and perplexity in the worker); the fast `run` reply
 *    leaves out `rss_peak_bytes` (optional in every reply; the client reads either spelling).
 * 6: `run` may carry `seq` and come through a shared page as well (PBH_DOORBELL, doorbell.ts); `hello` answers
 *    `doorbell`.
 * 7: a request's tensor bytes may lie in a /dev/shm file named by `bytes_file` instead of on the stream
 *    (tensor-file.ts; the client sends load_samples so).
 * 8: the shared page is gone (no `seq`, no `doorbell` in hello, no `bench` of resident batches); `unload_samples`.
 * 9: the worker serves an engine of the one-file contract (pbh_worker/engine.py) named by its manifest
 *    (PBH_ENGINE_MANIFEST, PBH_ENGINE); `load` always answers the executed precision.
 * 10: `generate` drives a decoder (PBH's cache graph, the Hugging Face layout, or the engine's own), `cache_shape` may
 *    be null, its reply says how requests were `served` (and a stream engine's `runtime_figures`); `rank_tokens`.
 */
export const PROTOCOL_VERSION = 10;

export const COMMANDS = ['hello', 'load', 'load_samples', 'unload_samples', 'run', 'run_closed_loop', 'run_schedule', 'generate', 'score_text', 'rank_tokens', 'infer', 'bench', 'profile', 'close'] as const;
export type Command = (typeof COMMANDS)[number];

export const tensorHeaderSchema = z.object({
  name: z.string(),
  dtype: DTypeSchema,
  shape: z.array(z.number().int().nonnegative()),
  nbytes: z.number().int().nonnegative(),
});
export type TensorHeader = z.infer<typeof tensorHeaderSchema>;

/** What framing needs from any reply header; command fields are checked by the schemas below. */
export const frameHeaderSchema = z.looseObject({
  id: z.number().int().nullable(),
  ok: z.boolean(),
  tensors: z.array(tensorHeaderSchema).default([]),
});
export type FrameHeader = z.infer<typeof frameHeaderSchema>;

const replyBase = {
  id: z.number().int(),
  ok: z.literal(true),
  rss_peak_bytes: z.number().int().nonnegative().optional(),
};

export const helloReplySchema = z.looseObject({
  ...replyBase,
  protocol: z.literal(PROTOCOL_VERSION),
  pid: z.number().int(),
  python: z.string(),
  runtime: z.string(),
  version: z.string(),
  devices: z.array(z.string()),
  details: z.record(z.string(), z.string()).optional(),
});
export type HelloReply = z.infer<typeof helloReplySchema>;

export const wireSpecSchema = TensorSpecSchema.extend({
  shape: z.array(z.union([z.number().int().nonnegative(), z.string(), z.null()])),
});

/** What the runtime says it executes, read back from it after compiling (not what was asked for). */
export const executedPrecisionWireSchema = z.object({
  executed: PrecisionSchema,
  evidence: z.string().min(1),
  /** Weight-only compression under that arithmetic (an LLM's int4 or int8 weights), read from the model; null: none. */
  weights: z.string().nullable().optional(),
});

export const loadReplySchema = z.looseObject({
  ...replyBase,
  compile_ms: z.number().nonnegative(),
  inputs: z.array(wireSpecSchema),
  outputs: z.array(wireSpecSchema),
  facts: z.record(z.string(), z.unknown()).default({}),
  precision: executedPrecisionWireSchema,
  /** Threads the runtime resolved for this model; null when it does not say. */
  threads: z.number().int().positive().nullable().default(null),
  /** Queries the model runs at once (`run_schedule`'s concurrency at most): OpenVINO's optimal infer requests, TVM 1. */
  max_concurrency: z.number().int().positive(),
});
export type LoadReply = z.infer<typeof loadReplySchema>;

export const loadSamplesReplySchema = z.looseObject({
  ...replyBase,
  /** Batches now resident; `run` takes indices below it. */
  batches: z.number().int().positive(),
  /** Tensor bytes received, for the caller to check against what it sent. */
  bytes: z.number().int().nonnegative(),
});
export type LoadSamplesReply = z.infer<typeof loadSamplesReplySchema>;

export const unloadSamplesReplySchema = z.looseObject({ ...replyBase });

/** Measured by the worker around the runtime's call on a resident batch (docs/worker-protocol.md says what per engine). */
export const runReplySchema = z.looseObject({
  ...replyBase,
  engine_ns: z.number().int().nonnegative(),
});
export type RunReply = z.infer<typeof runReplySchema>;

/**
 * `run_closed_loop`: per-query times come back as one int64 tensor `engine_ns` (a 600 s session is millions of
 * queries: raw bytes, not a JSON line); `queries` is its length, checked by the caller.
 */
export const closedLoopReplySchema = z.looseObject({
  ...replyBase,
  queries: z.number().int().positive(),
  wall_ns: z.number().int().nonnegative(),
});
export type ClosedLoopReply = z.infer<typeof closedLoopReplySchema>;

/** `run_schedule`: int64 tensors `issued_ns` and `completed_ns`, `queries` long each. */
export const scheduleReplySchema = z.looseObject({
  ...replyBase,
  queries: z.number().int().positive(),
});
export type ScheduleReply = z.infer<typeof scheduleReplySchema>;

/** `generate`: int64 tensors `arrival_ns` [requests], `tokens` and `token_ns` [requests x max_new_tokens]. */
export const generateReplySchema = z.looseObject({
  ...replyBase,
  requests: z.number().int().positive(),
  /** interleaved: the harness's loop on the engine's decoder; one_at_a_time: the runtime's own generate loop (capability stream); batched: a runtime that batches requests itself (capability batchStream). */
  served: z.enum(['interleaved', 'one_at_a_time', 'batched', 'server']).default('interleaved'),
  /** served server (capability serve): how output tokens were counted; server or batched on a schedule: the issue lateness limit. */
  token_count: z.enum(['tokenizer', 'server_usage', 'chunks']).optional(),
  issue: z.looseObject({ late_threshold_ns: z.number() }).optional(),
  /** Per request, the runtime's own figures (OpenVINO GenAI's perf metrics), where it reports them. */
  runtime_figures: z.array(z.record(z.string(), z.number())).optional(),
});

/** `score_text`: the summed next-token negative log-likelihood and how many tokens it covers. */
export const scoreTextReplySchema = z.looseObject({
  ...replyBase,
  nll_sum: z.number(),
  predicted: z.number().int().nonnegative(),
});

/** `rank_tokens`: int64 tensor `ranks` [positions], each continuation token's rank (0: the argmax) under teacher forcing. */
export const rankTokensReplySchema = z.looseObject({
  ...replyBase,
  positions: z.number().int().positive(),
});

export const inferReplySchema = z.looseObject({
  ...replyBase,
  engine_ns: z.number().int().nonnegative(),
});
export type InferReply = z.infer<typeof inferReplySchema>;

export const benchReplySchema = z.looseObject({
  ...replyBase,
  iteration_ns: z.array(z.number().int().nonnegative()),
});
export type BenchReply = z.infer<typeof benchReplySchema>;

export const profileReplySchema = z.looseObject({
  ...replyBase,
  layers: z.array(LayerTimingSchema),
});
export type ProfileReply = z.infer<typeof profileReplySchema>;

export const closeReplySchema = z.looseObject({ ...replyBase });

/** `id` is null when the worker could not read the request it answers (a broken stream). */
export const errorReplySchema = z.looseObject({
  id: z.number().int().nullable(),
  ok: z.literal(false),
  error: z.string(),
  kind: z.string(),
  traceback: z.string().default(''),
  fatal: z.boolean().default(false),
  rss_peak_bytes: z.number().int().nonnegative().optional(),
});
export type ErrorReply = z.infer<typeof errorReplySchema>;

export const replySchemas = {
  hello: helloReplySchema,
  load: loadReplySchema,
  load_samples: loadSamplesReplySchema,
  unload_samples: unloadSamplesReplySchema,
  run: runReplySchema,
  run_closed_loop: closedLoopReplySchema,
  run_schedule: scheduleReplySchema,
  generate: generateReplySchema,
  score_text: scoreTextReplySchema,
  rank_tokens: rankTokensReplySchema,
  infer: inferReplySchema,
  bench: benchReplySchema,
  profile: profileReplySchema,
  close: closeReplySchema,
} as const;
