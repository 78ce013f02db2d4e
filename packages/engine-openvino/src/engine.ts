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
  // INFERENCE_PRECISION_HINT values (f32, bf16, f16), and int8: a quantized graph's regions (the hint f32 outside
  // them); the worker reads back which precision the compute ops ran in (an fp32 graph asked int8 reports fp32).
  precisions: ['fp32', 'bf16', 'fp16', 'int8'],
  runtimeModule: 'openvino',
  // benchmark_app's loop (OpenVINO) and time_evaluator (TVM) are the runtimes' own; both have a per-layer profiler.
  probes: { modelOnly: true, layers: true },
});
