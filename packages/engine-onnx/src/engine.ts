import { type Availability, type Engine, type PrepareRequest, type PreparedModel } from '@pbh/core';
import { bundledDevices, ORT_NODE_VERSION, prepareInProcess } from './in-process.js';
import { OnnxOptionsSchema, parseOnnxOptions } from './options.js';
import { ortWorker, prepareInWorker } from './worker.js';

/**
 * ONNX Runtime through either door: a Python worker by default (the same kind of loop as every other engine, ranked
 * the same way), or the harness's own process through onnxruntime-node (`engines[].process: harness`).
 */
export const onnxRuntimeEngine: Engine = {
  name: 'onnxruntime',
  description: 'ONNX Runtime 1.30: in a Python worker (default), or in process through onnxruntime-node',
  optionsSchema: OnnxOptionsSchema,
  devices: bundledDevices(),
  precisions: ['fp32'],
  processes: ['worker', 'harness'],
  async probe(process): Promise<Availability> {
    if (process === 'worker') {
      const worker = await ortWorker.probe('worker');
      if (worker.available && worker.version !== ORT_NODE_VERSION) {
        return { available: false, reason: `the venv's onnxruntime is ${worker.version}, onnxruntime-node is ${ORT_NODE_VERSION}: both doors must run one library`, fix: 'npx pbh doctor --fix (python/requirements.txt pins the same version)' };
      }
      return worker;
    }
    return { available: true, version: ORT_NODE_VERSION, devices: bundledDevices(), details: { binding: 'onnxruntime-node' } };
  },
  prepare(req: PrepareRequest): Promise<PreparedModel> {
    return req.process === 'worker' ? prepareInWorker(req) : prepareInProcess(req, parseOnnxOptions(req.options));
  },
};
