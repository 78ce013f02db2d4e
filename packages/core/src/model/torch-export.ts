import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { findProjectRoot, findVenvPython, VENV_FIX } from '../worker/venv.js';

/** A PyTorch-born model file: a TorchScript .pt or a torch.export .pt2 (the PyTorch engines run it natively). */
export const isTorchModel = (file: string): boolean => file.endsWith('.pt') || file.endsWith('.pt2');

/** What python/torch_export answers: the ONNX export the other engines and the model analysis read. */
export const TorchExportSchema = z.object({
  onnx_path: z.string(),
  format: z.enum(['torchscript', 'torch_export']),
  source_sha256: z.string(),
  exporter: z.string(),
  exporter_version: z.string(),
  torch_version: z.string(),
  export_ms: z.number(),
  cache_hit: z.boolean(),
  input_names: z.array(z.string()),
  output_names: z.array(z.string()),
});
export type TorchExport = z.infer<typeof TorchExportSchema>;

export class TorchExportError extends Error {
  override name = 'TorchExportError';
}

/**
 * The ONNX export of `file`, made once by `python -m torch_export` and kept under `cacheDir` (keyed by the file's
 * bytes and torch's version, so every cell of the model and every later sweep reads the same file).
 */
export async function exportTorchModel(file: string, cacheDir = process.env.PBH_TORCH_ONNX_CACHE ?? path.resolve('.cache', 'torch-onnx')): Promise<TorchExport> {
  const venv = findVenvPython();
  const root = findProjectRoot();
  if (!venv || !root) throw new TorchExportError(`model ${file} is a PyTorch model; exporting it to ONNX needs the project venv. Fix: ${VENV_FIX}`);
  const result = await execa(venv.python, ['-m', 'torch_export', '--cache', cacheDir, file], {
    env: { PYTHONPATH: path.join(root, 'python') },
    reject: false,
    timeout: 20 * 60_000,
  });
  if (result.exitCode !== 0) {
    const said = result.stderr.split('\n').filter((l) => l.trim() && !/warn/i.test(l)).slice(-3).join(' ');
    throw new TorchExportError(`could not export ${file} to ONNX: ${said || result.shortMessage}`);
  }
  const parsed = TorchExportSchema.safeParse(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? 'null'));
  if (!parsed.success) throw new TorchExportError(`python -m torch_export answered for ${file} with a shape PBH does not know: ${parsed.error.message}`);
  return parsed.data;
}
