/** Runs python/prune (the numpy side) from the project venv and reads back its summary, checked with zod. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { PrunedLayerSchema } from '../model/index.js';
import { describePythonSearch, findProjectRoot, findVenvPython, VENV_FIX } from '../worker/venv.js';
import { PruneUsageError, type PruneRequest } from './request.js';
import type { Calibration } from './calibration.js';

export const PruneSummarySchema = z.object({
  variants: z.array(
    z.object({
      file: z.string(),
      tag: z.string(),
      method: z.string(),
      kind: z.enum(['unstructured', 'n_m']),
      target: z.number(),
      n: z.number().int().nullable(),
      m: z.number().int().nullable(),
      actual: z.number(),
      layers: z.array(PrunedLayerSchema),
    }),
  ),
  skipped_layers: z.array(z.object({ weight: z.string(), node: z.string(), op: z.string(), reason: z.string() })),
  calibration: z.object({ source: z.string(), samples: z.number().int(), sha256: z.string() }).nullable(),
  seconds: z.record(z.string(), z.number()),
});
export type PruneSummary = z.infer<typeof PruneSummarySchema>;

/** The Python side failed for a reason that is not the input's (a crash, a missing venv). */
export class PruneWorkerError extends Error {
  override name = 'PruneWorkerError';
}

/** python/ of the project (the folder holding the `prune` package), or an error saying where it was looked for. */
function pythonPackageRoot(root: string | undefined): string {
  const projectRoot = root ?? findProjectRoot();
  const dir = projectRoot ? path.join(projectRoot, 'python') : undefined;
  if (!dir || !existsSync(path.join(dir, 'prune', '__main__.py'))) {
    throw new PruneWorkerError(`pbh prune's Python package (python/prune) was not found above ${process.cwd()}; run pbh from the PBH project folder`);
  }
  return dir;
}

export async function runPrunePython(request: PruneRequest, calibration: Calibration | null, onProgress: (line: string) => void): Promise<PruneSummary> {
  const location = findVenvPython();
  if (!location) throw new PruneWorkerError(`pbh prune runs in the project's Python venv, and ${describePythonSearch()}. Fix: ${VENV_FIX}`);
  const args = [
    '-m', 'prune', path.resolve(request.model),
    '--out', path.resolve(request.out),
    '--stem', request.stem,
    '--method', request.methods.join(','),
    '--unstructured', request.unstructured.join(','),
    '--nm', request.nm.map(({ n, m }) => `${n}:${m}`).join(','),
    '--layers', request.layers.join(','),
    '--damping', String(request.damping),
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
    for (const line of text.split('\n')) if (line.startsWith('[prune] ')) onProgress(line.slice(8));
  });
  const result = await child;
  const detail = stderr.split('\n').filter((l) => !l.startsWith('[prune] ')).join('\n').trim();
  // Exit 2 is the Python side refusing its input (a layer, the calibration file): the user's to fix, like a bad flag.
  if (result.exitCode === 2) throw new PruneUsageError(detail || `${location.python} -m prune refused its input`);
  if (result.exitCode !== 0) {
    throw new PruneWorkerError(`${location.python} -m prune failed (${result.shortMessage ?? `exit ${result.exitCode}`})${detail ? `:\n${detail.slice(-4000)}` : ''}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(String(result.stdout));
  } catch {
    throw new PruneWorkerError(`${location.python} -m prune printed something other than its JSON summary: ${String(result.stdout).slice(0, 200)}`);
  }
  const parsed = PruneSummarySchema.safeParse(json);
  if (!parsed.success) throw new PruneWorkerError(`${location.python} -m prune's summary does not match its schema: ${parsed.error.message}`);
  return parsed.data;
}
