/**
 * Optimization facts a tool recorded in the model's own metadata: `pbh prune` and `pbh quantize` write them under the
 * metadata_props key `pbh.optimization` as JSON (python/prune/variants.py and python/quantize/variants.py document
 * schema 1; a quantized file's kind is "quantization" and it keeps its source's pruning facts under `pruned`). They
 * say what was asked for and how (method, kind, target, N:M; quantization method, dtypes, calibration, tool); what the
 * weights actually hold is measured separately (sparsity.ts, quantization.ts) and wins where the two could differ.
 */
import { z } from 'zod';

export const OPTIMIZATION_METADATA_KEY = 'pbh.optimization';

const Fraction = z.number().min(0).max(1);
const Count = z.number().int().min(0);

const Calibration = z.object({ source: z.string(), samples: Count, sha256: z.string() });

export const PrunedLayerSchema = z.object({
  weight: z.string(),
  node: z.string(),
  op: z.string(),
  shape: z.array(Count),
  elements: Count,
  zeros: Count,
  sparsity: Fraction,
  /** ||W X - W' X||^2 / ||W X||^2 on the calibration inputs; null when pruned without calibration. */
  relative_error: z.number().min(0).nullable(),
});
export type PrunedLayer = z.infer<typeof PrunedLayerSchema>;

export const OptimizationFactsSchema = z
  .object({
    schema: z.literal(1),
    tool: z.string(),
    method: z.string().min(1),
    kind: z.enum(['unstructured', 'n_m']),
    target: Fraction,
    /** N:M as PBH defines it (sparsity.ts): at most n nonzeros in every group of m. */
    n: z.number().int().positive().nullable(),
    m: z.number().int().positive().nullable(),
    /** Zero fraction over the pruned layers (what `target` asks for). */
    actual: Fraction,
    layers: z.array(PrunedLayerSchema),
    skipped_layers: z.array(z.object({ weight: z.string(), node: z.string(), op: z.string(), reason: z.string() })),
    calibration: Calibration.nullable(),
    damping: z.number().min(0).nullable(),
    source: z.object({ file: z.string(), sha256: z.string() }),
  })
  .refine((f) => (f.kind === 'n_m') === (f.n !== null && f.m !== null), { message: 'n and m are set exactly when kind is n_m' })
  .refine((f) => f.n === null || f.m === null || f.n < f.m, { message: 'n must be below m' });
export type OptimizationFacts = z.infer<typeof OptimizationFactsSchema>;

/** What `pbh quantize` did to a file (python/quantize/variants.py); dtypes and per_channel are read from its graph. */
export const QuantizationFactsSchema = z.object({
  schema: z.literal(1),
  tool: z.string(),
  kind: z.literal('quantization'),
  /** static (ONNX Runtime QDQ), dynamic (ONNX Runtime), nncf (NNCF post-training), int4 / nncf-int8 / nncf-int4 (weight-only). */
  method: z.string().min(1),
  scheme: z.enum(['static', 'dynamic', 'weight_only']),
  format: z.enum(['qdq', 'integer_ops', 'matmul_nbits']),
  weight_dtype: z.string().nullable(),
  activation_dtype: z.string().nullable(),
  per_channel: z.boolean(),
  /** Weights per scale of weight-only blocks (MatMulNBits); null (or absent, files quantized before) without them. */
  block_size: z.number().int().positive().nullable().optional(),
  calibration: Calibration.nullable(),
  calibration_method: z.string().nullable(),
  library: z.object({ name: z.string(), version: z.string() }),
  call: z.string(),
  quantized_ops: z.record(z.string(), Count),
  /** The variant against its source under ONNX Runtime on calibration samples; null without calibration. */
  check: z.object({ samples: Count, agreement: Fraction, max_abs_error: z.number().min(0), max_abs_reference: z.number().min(0) }).nullable(),
  source: z.object({ file: z.string(), sha256: z.string() }),
  /** The source's own pbh prune facts (a pruned model quantized), kept as written; null when the source was dense. */
  pruned: z.unknown().nullable(),
});
export type QuantizationFacts = z.infer<typeof QuantizationFactsSchema>;

function issuesOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).slice(0, 3).join('; ');
}

/**
 * The facts under OPTIMIZATION_METADATA_KEY: pruning (`facts`, a quantized file's `pruned` included) and quantization
 * (`quantization`), each null when absent; a malformed entry is a warning, never an error.
 */
export function readOptimizationFacts(metadata: Readonly<Record<string, string>>): {
  facts: OptimizationFacts | null;
  quantization: QuantizationFacts | null;
  warning: string | null;
} {
  const text = metadata[OPTIMIZATION_METADATA_KEY];
  if (text === undefined) return { facts: null, quantization: null, warning: null };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { facts: null, quantization: null, warning: `metadata ${OPTIMIZATION_METADATA_KEY} is not JSON (${(e as Error).message}); ignored` };
  }
  if (typeof json === 'object' && json !== null && (json as { kind?: unknown }).kind === 'quantization') {
    const q = QuantizationFactsSchema.safeParse(json);
    if (!q.success) return { facts: null, quantization: null, warning: `metadata ${OPTIMIZATION_METADATA_KEY} (quantization) does not match schema 1 (${issuesOf(q.error)}); ignored` };
    if (q.data.pruned === null || q.data.pruned === undefined) return { facts: null, quantization: q.data, warning: null };
    const pruned = pruneFacts(q.data.pruned);
    return { facts: pruned.facts, quantization: q.data, warning: pruned.warning && `${pruned.warning} (under pruned)` };
  }
  return { ...pruneFacts(json), quantization: null };
}

function pruneFacts(json: unknown): { facts: OptimizationFacts | null; warning: string | null } {
  const parsed = OptimizationFactsSchema.safeParse(json);
  if (!parsed.success) return { facts: null, warning: `metadata ${OPTIMIZATION_METADATA_KEY} does not match schema 1 (${issuesOf(parsed.error)}); ignored` };
  return { facts: parsed.data, warning: null };
}
