import { fileURLToPath } from 'node:url';
import { createNativeEngine } from '@pbh/core';
import { TVMOptionsSchema } from './options.js';

/** The Python side: packages/engine-tvm/python/tvm_worker.py (shipped next to dist/). */
export const TVM_WORKER_SCRIPT = fileURLToPath(new URL('../python/tvm_worker.py', import.meta.url));

export const tvmEngine = createNativeEngine({
  name: 'tvm',
  description: 'Apache TVM (Relax): imports the ONNX file, compiles it for the host CPU with LLVM (optionally MetaSchedule-tuned), in a Python worker',
  workerScript: TVM_WORKER_SCRIPT,
  optionsSchema: TVMOptionsSchema,
  devices: ['cpu'],
  // The Relax pipeline compiles the graph's own types; PBH runs no mixed-precision pass.
  precisions: ['fp32'],
  runtimeModule: 'tvm',
  probes: { modelOnly: true, layers: true },
  timeouts: {
    // Untuned TVM kernels are plain loop nests: one ResNet-50 image takes ~5 s on 2 cores, a batch of 32 minutes.
    infer: 15 * 60_000,
    bench: 60 * 60_000,
    profile: 60 * 60_000,
    // Build (~25 s for ResNet-50) plus the tuning budget (tuneBudgetS, 600 s by default) with room to spare.
    load: 30 * 60_000,
  },
});
