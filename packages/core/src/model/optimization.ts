/**
 * Optimization facts a tool recorded in the model's own metadata: `pbh prune` writes them under the metadata_props
 * key `pbh.optimization` as JSON (python/prune/variants.py documents schema 1). They say what was asked for and how
 * (method, kind, target, N:M); what the weights actually hold is measured separately (sparsity.ts) and wins where
 * the two could differ.
 */
import { z } from 'zod';

export const OPTIMIZATION_METADATA_KEY = 'pbh.optimization';

const Fraction = z.number().min(0).max(1);
const Count = z.number().int().min(0);

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
    calibration: z.object({ source: z.string(), samples: Count, sha256: z.string() }).nullable(),
    damping: z.number().min(0).nullable(),
    source: z.object({ file: z.string(), sha256: z.string() }),
  })
  .refine((f) => (f.kind === 'n_m') === (f.n !== null && f.m !== null), { message: 'n and m are set exactly when kind is n_m' })
  .refine((f) => f.n === null || f.m === null || f.n < f.m, { message: 'n must be below m' });
export type OptimizationFacts = z.infer<typeof OptimizationFactsSchema>;

/** The facts under OPTIMIZATION_METADATA_KEY, or null when absent; a malformed entry is a warning, never an error. */
export function readOptimizationFacts(metadata: Readonly<Record<string, string>>): { facts: OptimizationFacts | null; warning: string | null } {
  const text = metadata[OPTIMIZATION_METADATA_KEY];
  if (text === undefined) return { facts: null, warning: null };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { facts: null, warning: `metadata ${OPTIMIZATION_METADATA_KEY} is not JSON (${(e as Error).message}); ignored` };
  }
  const parsed = OptimizationFactsSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).slice(0, 3);
    return { facts: null, warning: `metadata ${OPTIMIZATION_METADATA_KEY} does not match schema 1 (${issues.join('; ')}); ignored` };
  }
  return { facts: parsed.data, warning: null };
}
