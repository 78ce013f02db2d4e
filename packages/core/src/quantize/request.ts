/** `pbh quantize`'s flags, validated once (zod) into what the Python side is asked to do. */
import { z } from 'zod';

export const QUANTIZE_METHODS = ['static', 'dynamic', 'nncf', 'int4', 'nncf-int8', 'nncf-int4'] as const;
/** Methods that set activation scales from calibration inputs; the others (dynamic, weight-only) need no data. */
const CALIBRATED: readonly QuantizeMethod[] = ['static', 'nncf'];
export type QuantizeMethod = (typeof QUANTIZE_METHODS)[number];
export const GRANULARITIES = ['per_channel', 'per_tensor'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Thrown for a flag value PBH refuses; the message names the flag, the value and what it takes. */
export class QuantizeUsageError extends Error {
  override name = 'QuantizeUsageError';
}

const Methods = z.array(z.enum(QUANTIZE_METHODS)).min(1);
const Granularities = z.array(z.enum(GRANULARITIES)).min(1);
const Name = z.string().regex(/^[\w.-]+$/);
const Samples = z.coerce.number().int().positive();

export interface QuantizeRequest {
  model: string;
  out: string;
  stem: string;
  methods: QuantizeMethod[];
  granularities: Granularity[];
  calibration: string | null;
  calibrationSamples: number | null;
}

const list = (text: unknown): string[] => [...new Set(String(text ?? '').split(',').map((s) => s.trim()).filter(Boolean))];

function flag<T>(schema: z.ZodType<T>, value: unknown, name: string, takes: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new QuantizeUsageError(`${name} ${JSON.stringify(value)}: ${takes}`);
  return parsed.data;
}

export function parseQuantizeRequest(values: Record<string, string | boolean | string[] | undefined>, positionals: string[]): QuantizeRequest {
  const model = positionals[0];
  if (!model || positionals.length > 1) {
    throw new QuantizeUsageError(`pbh quantize takes one model file, e.g. pbh quantize model.onnx --out quantized/ --method static --calibration data.npy${positionals.length > 1 ? ` (got ${positionals.join(' ')})` : ''}`);
  }
  const out = typeof values.out === 'string' ? values.out : undefined;
  if (!out) throw new QuantizeUsageError('pbh quantize needs --out DIR, the folder the quantized variants are written to');
  const methods = values.method === undefined ? ['static' as const] : flag(Methods, list(values.method), '--method', `takes ${QUANTIZE_METHODS.join(', ')} (comma-separated for several)`);
  const granularities = values.granularity === undefined
    ? ['per_channel' as const]
    : flag(Granularities, list(values.granularity), '--granularity', `takes ${GRANULARITIES.join(', ')} (weight scales per output channel or one per tensor; both: per_channel,per_tensor)`);
  const calibration = typeof values.calibration === 'string' ? values.calibration : null;
  const needData = methods.filter((m) => CALIBRATED.includes(m));
  if (needData.length > 0 && !calibration) {
    throw new QuantizeUsageError(
      `--method ${needData.join(',')} needs --calibration FILE.npy or CONFIG.yaml: static quantization sets each activation's scale from calibration inputs. --method dynamic and the weight-only int4, nncf-int8, nncf-int4 need no data.`,
    );
  }
  const samples = values['calibration-samples'] === undefined ? null : flag(Samples, values['calibration-samples'], '--calibration-samples', 'takes a positive integer');
  const name = values.name === undefined ? undefined : flag(Name, values.name, '--name', 'takes letters, digits, ".", "_" and "-" (it names the output files)');
  return {
    model,
    out,
    stem: name ?? model.replace(/^.*[\\/]/, '').replace(/\.onnx$/i, ''),
    methods,
    granularities,
    calibration,
    calibrationSamples: samples,
  };
}
