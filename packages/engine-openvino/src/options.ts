import { z } from 'zod';

/**
 * OpenVINO compile options PBH exposes; each maps to one OpenVINO property (named in its description). Precision is
 * not among them: it is the cell's `engines[].precision`, which the worker always pins as INFERENCE_PRECISION_HINT.
 */
export const OpenVINOOptionsSchema = z.strictObject({
  device: z.string().min(1).optional().describe('OpenVINO device name (CPU, GPU, NPU, AUTO:GPU,CPU); defaults to the cell device in upper case'),
  hint: z
    .enum(['latency', 'throughput'])
    .default('latency')
    .describe('PERFORMANCE_HINT; throughput also makes bench keep OPTIMAL_NUMBER_OF_INFER_REQUESTS requests in flight'),
  streams: z.union([z.number().int().min(1), z.literal('auto')]).optional().describe('NUM_STREAMS; unset lets the hint decide'),
  threads: z.number().int().min(1).optional().describe('INFERENCE_NUM_THREADS; unset uses every core'),
});
export type OpenVINOOptions = z.infer<typeof OpenVINOOptionsSchema>;
