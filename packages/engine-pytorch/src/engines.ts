import { fileURLToPath } from 'node:url';
import type { ZodType } from 'zod';
import { createNativeEngine, type Engine } from '@pbh/core';
import { CompileOptionsSchema, EagerOptionsSchema, TorchScriptOptionsSchema } from './options.js';

/** The Python side: packages/engine-pytorch/python/pytorch_worker.py (shipped next to dist/); PBH_TORCH_MODE picks the build. */
export const PYTORCH_WORKER_SCRIPT = fileURLToPath(new URL('../python/pytorch_worker.py', import.meta.url));

/** torch is not in the default venv (it brings ~5.5 GB of CUDA libraries): this installs it. */
export const PYTORCH_FIX = 'npx pbh doctor --fix --engine pytorch (installs python/requirements-pytorch.txt into .venv)';

type Mode = 'eager' | 'torchscript' | 'compile';

function torchEngine(name: string, mode: Mode, description: string, optionsSchema: ZodType<Record<string, unknown>>, loadMinutes: number): Engine {
  const engine = createNativeEngine({
    name,
    description,
    workerScript: PYTORCH_WORKER_SCRIPT,
    optionsSchema,
    devices: ['cpu'],
    // bf16 through torch.autocast, refused by the worker where the CPU has no bf16 units.
    precisions: ['fp32', 'bf16'],
    runtimeModule: 'torch',
    probes: { modelOnly: true, layers: true },
    binding: `torch (Python) in a pbh worker, ${mode}`,
    env: { PBH_TORCH_MODE: mode },
    timeouts: { load: loadMinutes * 60_000 },
  });
  return {
    ...engine,
    async probe(process) {
      const availability = await engine.probe(process);
      return availability.available ? availability : { ...availability, fix: PYTORCH_FIX };
    },
  };
}

export const pytorchEngine = torchEngine(
  'pytorch',
  'eager',
  'PyTorch eager: the nn.Module (ONNX through onnx2torch, a TorchScript .pt or torch.export .pt2) under torch.inference_mode, in a Python worker',
  EagerOptionsSchema,
  20,
);

export const torchscriptEngine = torchEngine(
  'torchscript',
  'torchscript',
  'TorchScript: torch.jit.trace and freeze of the PyTorch module, run by the TorchScript interpreter in a Python worker',
  TorchScriptOptionsSchema,
  20,
);

export const torchCompileEngine = torchEngine(
  'torch-compile',
  'compile',
  'torch.compile (inductor: C++ kernels for the CPU) of the PyTorch module, compiled at prepare, in a Python worker',
  CompileOptionsSchema,
  40,
);
