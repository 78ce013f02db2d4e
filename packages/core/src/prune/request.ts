/** `pbh prune`'s flags, validated once (zod) into what the Python side is asked to do. */
import { z } from 'zod';

export const PRUNE_METHODS = ['magnitude', 'obc'] as const;
export type PruneMethod = (typeof PRUNE_METHODS)[number];
export const DEFAULT_LAYERS = ['Conv', 'Gemm', 'MatMul'] as const;
export const DEFAULT_DAMPING = 0.01;

/** Thrown for a flag value PBH refuses; the message names the flag, the value and what it takes. */
export class PruneUsageError extends Error {
  override name = 'PruneUsageError';
}

export interface PruneRequest {
  model: string;
  out: string;
  stem: string;
  methods: PruneMethod[];
  unstructured: number[];
  nm: { n: number; m: number }[];
  layers: string[];
  calibration: string | null;
  calibrationSamples: number | null;
  damping: number;
}

const list = (text: string | undefined): string[] => [...new Set((text ?? '').split(',').map((s) => s.trim()).filter(Boolean))];

function flagError(flag: string, value: string, takes: string): never {
  throw new PruneUsageError(`${flag} ${JSON.stringify(value)}: ${takes}`);
}

const Target = z.coerce.number().gt(0).lt(1);
const NM = z.string().regex(/^\d+:\d+$/).transform((s) => {
  const [n, m] = s.split(':').map(Number) as [number, number];
  return { n, m };
}).refine(({ n, m }) => n >= 1 && n < m && m <= 64);

export function parsePruneRequest(values: Record<string, string | boolean | string[] | undefined>, positionals: string[]): PruneRequest {
  const model = positionals[0];
  if (!model || positionals.length > 1) {
    throw new PruneUsageError(`pbh prune takes one model file, e.g. pbh prune model.onnx --out pruned/ --nm 2:4 --method magnitude${positionals.length > 1 ? ` (got ${positionals.join(' ')})` : ''}`);
  }
  const out = typeof values.out === 'string' ? values.out : undefined;
  if (!out) throw new PruneUsageError('pbh prune needs --out DIR, the folder the pruned variants are written to');
  const methods = list(values.method as string | undefined);
  for (const m of methods) {
    if (!(PRUNE_METHODS as readonly string[]).includes(m)) flagError('--method', m, `takes ${PRUNE_METHODS.join(', ')} (comma-separated for both)`);
  }
  const unstructured = list(values.unstructured as string | undefined).map((t) => {
    const parsed = Target.safeParse(t);
    return parsed.success ? parsed.data : flagError('--unstructured', t, 'takes zero fractions strictly between 0 and 1, e.g. 0.25,0.75');
  });
  const nm = list(values.nm as string | undefined).map((t) => {
    const parsed = NM.safeParse(t);
    return parsed.success ? parsed.data : flagError('--nm', t, 'takes N:M with 1 <= N < M <= 64, meaning at most N nonzeros in every M consecutive weights, e.g. 1:2,2:4,4:8');
  });
  if (unstructured.length === 0 && nm.length === 0) {
    throw new PruneUsageError('pbh prune needs at least one variant: --unstructured 0.25,0.75 and/or --nm 1:2,2:4,4:8');
  }
  const calibration = typeof values.calibration === 'string' ? values.calibration : null;
  const resolvedMethods = (methods.length > 0 ? methods : ['obc']) as PruneMethod[];
  if (resolvedMethods.includes('obc') && !calibration) {
    throw new PruneUsageError(
      '--method obc (the default) needs --calibration FILE.npy or CONFIG.yaml: OBC builds each layer\'s Hessian from calibration inputs. Use --method magnitude to prune without data.',
    );
  }
  const samplesText = values['calibration-samples'] as string | undefined;
  const samples = samplesText === undefined ? null : z.coerce.number().int().positive().safeParse(samplesText);
  if (samples && !samples.success) flagError('--calibration-samples', samplesText!, 'takes a positive integer');
  const dampingText = values.damping as string | undefined;
  const damping = dampingText === undefined ? DEFAULT_DAMPING : z.coerce.number().min(0).safeParse(dampingText);
  if (typeof damping !== 'number' && !damping.success) flagError('--damping', dampingText!, 'takes a number >= 0 (a fraction of the mean Hessian diagonal, 0.01 by default)');
  const layers = list(values.layers as string | undefined);
  const name = typeof values.name === 'string' ? values.name : undefined;
  if (name !== undefined && !/^[\w.-]+$/.test(name)) flagError('--name', name, 'takes letters, digits, ".", "_" and "-" (it names the output files)');
  return {
    model,
    out,
    stem: name ?? model.replace(/^.*[\\/]/, '').replace(/\.onnx$/i, ''),
    methods: resolvedMethods,
    unstructured,
    nm,
    layers: layers.length > 0 ? layers : [...DEFAULT_LAYERS],
    calibration,
    calibrationSamples: samples && samples.success ? samples.data : null,
    damping: typeof damping === 'number' ? damping : damping.data,
  };
}
