import { enginesFromManifest, type PrepareRequest, type PreparedModel } from '@pbh/core';
import { ORT_MANIFEST } from './options.js';
import { acceptsSmallerBatch } from './precision.js';

/** The worker door: core's proxy of python/onnxruntime_worker.py, which reads its own precision and layer timings. */
export const ortWorker = enginesFromManifest(ORT_MANIFEST)[0]!;

/** ONNX Runtime in a worker; a symbolic batch axis lets a short last batch run at its own size, as in process. */
export async function prepareInWorker(req: PrepareRequest): Promise<PreparedModel> {
  const model = await ortWorker.prepare(req);
  return { ...model, capabilities: { ...model.capabilities, smallerBatch: acceptsSmallerBatch(model.inputs) } };
}
