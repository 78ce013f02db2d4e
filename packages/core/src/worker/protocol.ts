import { z } from 'zod';

/** Version announced by `hello`; bump when a frame or command changes incompatibly. */
export const PROTOCOL_VERSION = 1;

export const WIRE_DTYPES = ['float32', 'float64', 'float16', 'int8', 'uint8', 'int32', 'int64', 'bool'] as const;

export const COMMANDS = ['hello', 'load', 'infer', 'bench', 'profile', 'close'] as const;
export type Command = (typeof COMMANDS)[number];

export const tensorHeaderSchema = z.object({
  name: z.string(),
  dtype: z.enum(WIRE_DTYPES),
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

export const wireSpecSchema = z.object({
  name: z.string(),
  dtype: z.enum(WIRE_DTYPES),
  shape: z.array(z.union([z.number().int(), z.string(), z.null()])),
});

export const loadReplySchema = z.looseObject({
  ...replyBase,
  compile_ms: z.number().nonnegative(),
  inputs: z.array(wireSpecSchema),
  outputs: z.array(wireSpecSchema),
  facts: z.record(z.string(), z.unknown()).default({}),
});
export type LoadReply = z.infer<typeof loadReplySchema>;

export const inferReplySchema = z.looseObject({
  ...replyBase,
  engine_ns: z.number().int().nonnegative(),
});
export type InferReply = z.infer<typeof inferReplySchema>;

export const benchReplySchema = z.looseObject({
  ...replyBase,
  iteration_ns: z.array(z.number().int().nonnegative()),
  request_latency_ns: z.array(z.number().int().nonnegative()).optional(),
  concurrency: z.number().int().positive().optional(),
});
export type BenchReply = z.infer<typeof benchReplySchema>;

export const layerTimingWireSchema = z.looseObject({
  name: z.string(),
  op_type: z.string(),
  mean_ns: z.number().nonnegative(),
  calls: z.number().int().nonnegative(),
  input_shapes: z.string().optional(),
  output_shapes: z.string().optional(),
});

export const profileReplySchema = z.looseObject({
  ...replyBase,
  layers: z.array(layerTimingWireSchema),
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
  infer: inferReplySchema,
  bench: benchReplySchema,
  profile: profileReplySchema,
  close: closeReplySchema,
} as const;
