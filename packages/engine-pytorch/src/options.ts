import { z } from 'zod';

/** What every PyTorch engine takes; each says which torch call it sets. The defaults here are the only ones. */
const common = {
  threads: z.number().int().min(1).optional().describe('torch.set_num_threads (intra-op pool); unset: torch\'s default, one per physical core'),
  interopThreads: z.number().int().min(1).optional().describe('torch.set_num_interop_threads; unset: torch\'s default'),
  preferSource: z
    .boolean()
    .default(true)
    .describe('an ONNX file that PBH exported from a .pt or .pt2 (its metadata names the source) is run from that source; false converts the ONNX file with onnx2torch'),
};

export const EagerOptionsSchema = z.strictObject(common);

export const TorchScriptOptionsSchema = z.strictObject({
  ...common,
  freeze: z.boolean().default(true).describe('torch.jit.freeze the traced module (weights inlined as constants, conv-bn folded)'),
  optimizeForInference: z.boolean().default(false).describe('torch.jit.optimize_for_inference after freezing (oneDNN layouts for convs)'),
});

export const CompileOptionsSchema = z.strictObject({
  ...common,
  backend: z.string().min(1).default('inductor').describe('torch.compile backend (inductor builds C++ kernels with the machine\'s compiler on CPU)'),
  compileMode: z
    .enum(['default', 'reduce-overhead', 'max-autotune', 'max-autotune-no-cudagraphs'])
    .default('default')
    .describe('torch.compile mode'),
  fullgraph: z.boolean().default(false).describe('torch.compile fullgraph: a graph break is an error instead of a fall back to eager'),
});

export type EagerOptions = z.infer<typeof EagerOptionsSchema>;
export type TorchScriptOptions = z.infer<typeof TorchScriptOptionsSchema>;
export type CompileOptions = z.infer<typeof CompileOptionsSchema>;
