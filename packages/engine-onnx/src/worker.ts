import { fileURLToPath } from 'node:url';
import { createNativeEngine, type PrepareRequest, type PreparedModel } from '@pbh/core';
import { ortLayers, sessionOptions } from './in-process.js';
import { OnnxOptionsSchema, type OnnxOptions } from './options.js';
import { acceptsSmallerBatch, checkPrecision, sessionPrecision } from './precision.js';

/** The Python side: packages/engine-onnx/python/onnxruntime_worker.py (shipped next to dist/). */
export const ORT_WORKER_SCRIPT = fileURLToPath(new URL('../python/onnxruntime_worker.py', import.meta.url));

export const ortWorker = createNativeEngine({
  name: 'onnxruntime',
  description: 'ONNX Runtime through its Python binding, in a Python worker',
  workerScript: ORT_WORKER_SCRIPT,
  optionsSchema: OnnxOptionsSchema,
  devices: ['cpu'],
  precisions: ['fp32'],
  runtimeModule: 'onnxruntime',
  binding: 'onnxruntime (Python) in a pbh worker',
  // Layers come from onnxruntime's profiler through onnxruntime-node (same libonnxruntime); see prepareInWorker.
  probes: { modelOnly: false, layers: false },
});

/**
 * ONNX Runtime in a worker. Precision and the short last batch follow the session's own metadata, as in process;
 * per-layer timings are onnxruntime's profiler on a second session through onnxruntime-node, the same library
 * version (onnxruntime-node's profile file is what the harness already parses).
 */
export async function prepareInWorker(req: PrepareRequest, options: OnnxOptions): Promise<PreparedModel> {
  const model = await ortWorker.prepare(req);
  let precision: Awaited<ReturnType<typeof sessionPrecision>>;
  try {
    // The worker's session gets these same options (onnxruntime_worker.py maps the schema's names one to one).
    precision = await sessionPrecision(req.model.path, sessionOptions(options, req.device), options.graphOptimizationLevel, req.model.workDir, model.inputs, model.outputs);
    checkPrecision(precision, req.precision, req.model.path);
  } catch (e) {
    await model.dispose();
    throw e;
  }
  return {
    ...model,
    precision,
    capabilities: { ...model.capabilities, smallerBatch: acceptsSmallerBatch(model.inputs) },
    probes: { ...model.probes, layers: (batch, iterations) => ortLayers(req, options, batch, iterations) },
  };
}
