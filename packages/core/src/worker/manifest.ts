import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PrecisionSchema } from '../contracts/precision.js';

/** The file that declares a worker engine (or several): next to its Python file, at its package's or folder's root. */
export const MANIFEST_FILE = 'pbh-engine.json';

const TimeoutsSchema = z
  .strictObject({
    hello: z.number().int().positive(),
    load: z.number().int().positive(),
    loadSamples: z.number().int().positive(),
    infer: z.number().int().positive(),
    bench: z.number().int().positive(),
    profile: z.number().int().positive(),
    sessionSlack: z.number().int().positive(),
    close: z.number().int().positive(),
  })
  .partial()
  .describe('Milliseconds each worker command may take before the worker is killed (defaults: DEFAULT_NATIVE_TIMEOUTS)');

/** What the engine can do beyond load and bind; each needs its method in the Python file (pbh_worker/engine.py). */
export const CapabilitiesSchema = z.strictObject({
  modelOnly: z.boolean().default(false).describe("model_only(batch, iterations): the runtime's own timing loop, no IPC"),
  layers: z.boolean().default(false).describe("layers(batch, iterations): per-layer timings from the runtime's profiler"),
  concurrency: z.boolean().default(false).describe('max_concurrency() and bind_async(batch): several queries in flight in a schedule'),
  decoder: z.boolean().default(false).describe("decoder(): the runtime's own prefill and decode of a language model (the generate workload); without it, or where decoder() returns None for the model loaded, generation drives the graph through bind"),
  stream: z.boolean().default(false).describe("stream(ids, max_new_tokens, on_token): the runtime's own generate loop, one request at a time, each token timed as it is streamed (no logits: no perplexity)"),
  batchStream: z.boolean().default(false).describe('batch_runtime(concurrency, max_tokens): a runtime that batches concurrent requests itself (continuous batching); the worker adds each request at its arrival, up to the concurrency in flight, steps the runtime and times each token as its step returns (no logits: no perplexity)'),
  serve: z.boolean().default(false).describe('serve_session(concurrency) and output_tokens(text): a server behind a client; the worker issues the whole schedule concurrently, each request at its arrival, each streamed chunk timed (pbh_worker/serving.py; no logits)'),
});

const JsonSchemaObject = z
  .looseObject({ type: z.literal('object'), properties: z.record(z.string(), z.unknown()).default({}) })
  .describe('JSON Schema of the engine options (engines[].options in a config); defaults here are the only ones');

export const EngineDeclarationSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'lower case letters, digits and dashes'),
  description: z.string().min(1),
  worker: z.string().min(1).describe("The engine's Python file, relative to the manifest"),
  module: z.string().min(1).describe('Python module the runtime needs; the probe imports it'),
  devices: z.array(z.string().min(1)).min(1),
  precisions: z.array(PrecisionSchema).min(1).describe('Precisions a config may ask for; the engine reads back what executed'),
  capabilities: CapabilitiesSchema.default({ modelOnly: false, layers: false, concurrency: false, decoder: false, stream: false, batchStream: false, serve: false }),
  options: JsonSchemaObject.default({ type: 'object', properties: {} }),
  binding: z.string().min(1).optional().describe('Names the binding in Profiles (default: "<module> (Python) in a pbh worker")'),
  fix: z.string().min(1).optional().describe('What to run when the module is missing (default: npx pbh doctor --fix)'),
  env: z.record(z.string(), z.string()).default({}).describe("Extra environment for the worker (thread pools, runtime log levels)"),
  timeouts: TimeoutsSchema.default({}),
});
export type EngineDeclaration = z.infer<typeof EngineDeclarationSchema>;

export const ManifestSchema = z.strictObject({
  $schema: z.string().optional(),
  $defs: z.record(z.string(), z.unknown()).optional().describe('Option schemas shared by the engines of this file, as "#/$defs/NAME"'),
  engines: z.array(EngineDeclarationSchema).min(1),
});
export type Manifest = z.infer<typeof ManifestSchema>;

export class ManifestError extends Error {
  override name = 'ManifestError';
}

/** A manifest read and checked, its worker paths made absolute. */
export function readManifest(file: string): Manifest & { file: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ManifestError(`cannot read the engine manifest ${file}: ${(e as Error).message}`);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ManifestError(`engine manifest ${file} is not valid: ${issues}. docs/adding-an-engine.md shows one.`);
  }
  const dir = path.dirname(path.resolve(file));
  return { ...parsed.data, file: path.resolve(file), engines: parsed.data.engines.map((e) => ({ ...e, worker: path.resolve(dir, e.worker) })) };
}

/** The declaration's options as a zod schema (zod's own JSON Schema reader), with the manifest's shared `$defs`. */
export function optionsSchemaOf(manifest: Manifest, declaration: EngineDeclaration): z.ZodType<Record<string, unknown>> {
  const schema = { ...declaration.options, ...(manifest.$defs ? { $defs: manifest.$defs } : {}) };
  // fromJSONSchema types its result as unknown; the declaration's root is an object schema (JsonSchemaObject).
  return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<Record<string, unknown>>;
}
