import { z } from 'zod';

/** Where a model came from when the config named a PyTorch file: its ONNX export, by which exporter, cached or not. */
export const ModelSourceSchema = z.object({
  path: z.string(),
  format: z.enum(['torchscript', 'torch_export']),
  source_sha256: z.string(),
  onnx_path: z.string(),
  exporter: z.string(),
  exporter_version: z.string(),
  torch_version: z.string(),
  export_ms: z.number(),
  cache_hit: z.boolean(),
});
export type ModelSource = z.infer<typeof ModelSourceSchema>;
