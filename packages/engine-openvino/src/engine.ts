import { fileURLToPath } from 'node:url';
import { createNativeEngine } from '@pbh/core';
import { OpenVINOOptionsSchema } from './options.js';

/** The Python side: packages/engine-openvino/python/openvino_worker.py (shipped next to dist/). */
export const OPENVINO_WORKER_SCRIPT = fileURLToPath(new URL('../python/openvino_worker.py', import.meta.url));

export const openvinoEngine = createNativeEngine({
  name: 'openvino',
  description: 'Intel OpenVINO runtime; reads the ONNX file directly and compiles it per device, in a Python worker',
  workerScript: OPENVINO_WORKER_SCRIPT,
  optionsSchema: OpenVINOOptionsSchema,
  devices: ['cpu', 'gpu', 'npu'],
  // INFERENCE_PRECISION_HINT values (f32, bf16, f16); the worker reads back which one the compute ops ran in.
  precisions: ['fp32', 'bf16', 'fp16'],
  runtimeModule: 'openvino',
  // benchmark_app's loop (OpenVINO) and time_evaluator (TVM) are the runtimes' own; both have a per-layer profiler.
  probes: { modelOnly: true, layers: true },
});
