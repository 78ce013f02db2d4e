/** Runs python/quantize (ONNX Runtime's and NNCF's quantizers) from the project venv and reads back its summary (zod). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import type { Calibration } from '../prune/calibration.js';
import { describePythonSearch, findProjectRoot, findVenvPython, VENV_FIX } from '../worker/venv.js';
import { QuantizeUsageError, type QuantizeRequest } from './request.js';

const Count = z.number().int().min(0);

export const QuantizeSummarySchema = z.object({
  variants: z.array(
    z.object({
      file: z.string(),
      tag: z.string(),
      size_bytes: Count,
      method: z.string(),
      scheme: z.enum(['static', 'dynamic', 'weight_only']),
      format: z.enum(['qdq', 'integer_ops', 'matmul_nbits']),
      weight_dtype: z.string().nullable(),
      activation_dtype: z.string().nullable(),
      per_channel: z.boolean(),
      /** Weights per scale of weight-only blocks (MatMulNBits); null without them. */
      block_size: z.number().int().positive().nullable(),
      quantized_ops: z.record(z.string(), Count),
      check: z.object({ samples: Count, agreement: z.number(), max_abs_error: z.number(), max_abs_reference: z.number() }).nullable(),
      library: z.object({ name: z.string(), version: z.string() }),
    }),
  ),
  calibration: z.object({ source: z.string(), samples: Count, sha256: z.string() }).nullable(),
  source_size_bytes: Count,
  versions: z.record(z.string(), z.string()),
  seconds: z.record(z.string(), z.number()),
});
export type QuantizeSummary = z.infer<typeof QuantizeSummarySchema>;

/** The Python side failed for a reason that is not the input's (a crash, a missing venv). */
export class QuantizeWorkerError extends Error {
  override name = 'QuantizeWorkerError';
}

function pythonPackageRoot(root: string | undefined): string {
  const projectRoot = root ?? findProjectRoot();
  const dir = projectRoot ? path.join(projectRoot, 'python') : undefined;
  if (!dir || !existsSync(path.join(dir, 'quantize', '__main__.py'))) {
    throw new QuantizeWorkerError(`pbh quantize's Python package (python/quantize) was not found above ${process.cwd()}; run pbh from the PBH project folder`);
  }
  return dir;
}

export async function runQuantizePython(request: QuantizeRequest, calibration: Calibration | null, onProgress: (line: string) => void): Promise<QuantizeSummary> {
  const location = findVenvPython();
  if (!location) throw new QuantizeWorkerError(`pbh quantize runs in the project's Python venv, and ${describePythonSearch()}. Fix: ${VENV_FIX}`);
  const args = [
    '-m', 'quantize', path.resolve(request.model),
    '--out', path.resolve(request.out),
    '--stem', request.stem,
    '--method', request.methods.join(','),
    '--granularity', request.granularities.join(','),
    ...(calibration ? ['--calibration', path.resolve(calibration.file), '--calibration-label', calibration.label] : []),
  ];
  const child = execa(location.python, args, {
    env: { PYTHONPATH: pythonPackageRoot(location.root), PYTHONDONTWRITEBYTECODE: '1' },
    reject: false,
    stdout: 'pipe',
    stderr: 'pipe',
    lines: false,
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stderr += text;
    for (const line of text.split('\n')) if (line.startsWith('[quantize] ')) onProgress(line.slice(11));
  });
  const result = await child;
  const detail = stderr.split('\n').filter((l) => !l.startsWith('[quantize] ')).join('\n').trim();
  // Exit 2 is the Python side refusing its input (the calibration file, the model): the user's to fix, like a bad flag.
  if (result.exitCode === 2) throw new QuantizeUsageError(detail.split('\n').slice(-3).join('\n') || `${location.python} -m quantize refused its input`);
  if (result.exitCode !== 0) {
    throw new QuantizeWorkerError(`${location.python} -m quantize failed (${result.shortMessage ?? `exit ${result.exitCode}`})${detail ? `:\n${detail.slice(-4000)}` : ''}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(String(result.stdout));
  } catch {
    throw new QuantizeWorkerError(`${location.python} -m quantize printed something other than its JSON summary: ${String(result.stdout).slice(0, 200)}`);
  }
  const parsed = QuantizeSummarySchema.safeParse(json);
  if (!parsed.success) throw new QuantizeWorkerError(`${location.python} -m quantize's summary does not match its schema: ${parsed.error.message}`);
  return parsed.data;
}
