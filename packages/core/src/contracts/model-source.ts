import { z } from 'zod';

/**
 * Where a model came from when the config named a file of another framework (a .pt, .pt2, …): its ONNX export, by
 * which converter, cached or not. `framework_version` is the source framework's (torch, tensorflow); Profiles written
 * before other frameworks came named it `torch_version`, read here as the same field.
 */
export const ModelSourceSchema = z.preprocess(
  (v) => (v && typeof v === 'object' && 'torch_version' in v && !('framework_version' in v) ? { ...v, framework_version: (v as { torch_version: unknown }).torch_version } : v),
  z.object({
    path: z.string(),
    /** The source's format as its converter names it: torchscript, torch_export, … */
    format: z.string().min(1),
    source_sha256: z.string(),
    onnx_path: z.string(),
    exporter: z.string(),
    exporter_version: z.string(),
    framework_version: z.string(),
    export_ms: z.number(),
    cache_hit: z.boolean(),
  }),
);
export type ModelSource = z.infer<typeof ModelSourceSchema>;
