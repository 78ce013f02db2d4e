import { z } from 'zod';

/** onnxruntime-node session options PBH exposes; names follow onnxruntime's own SessionOptions. */
export const OnnxOptionsSchema = z.strictObject({
  executionProviders: z.array(z.enum(['cpu', 'cuda', 'tensorrt', 'webgpu'])).optional()
    .describe('defaults to the cell device; providers the bundled binary lacks are reported as unavailable'),
  graphOptimizationLevel: z.enum(['disabled', 'basic', 'extended', 'layout', 'all']).default('all'),
  intraOpNumThreads: z.number().int().min(0).default(0).describe('0 = onnxruntime decides (one per physical core)'),
  interOpNumThreads: z.number().int().min(0).default(0),
  executionMode: z.enum(['sequential', 'parallel']).default('sequential'),
  enableCpuMemArena: z.boolean().default(true),
  enableMemPattern: z.boolean().default(true),
  parallelRuns: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe('runs one session may have in flight at once (server and offline scenarios); each shares the intra-op thread pool'),
});
export type OnnxOptions = z.infer<typeof OnnxOptionsSchema>;
