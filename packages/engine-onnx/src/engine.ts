import { performance } from 'node:perf_hooks';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import type { Availability, Engine, PrepareRequest, PreparedModel, TensorMap } from '@pbh/core';
import { readOrtProfile } from './layers.js';
import { OnnxOptionsSchema, type OnnxOptions } from './options.js';
import { fromOrt, ortTypeToDType, toOrt } from './tensors.js';

const VERSION = ort.env.versions.common;

function bundledDevices(): string[] {
  return ort.listSupportedBackends().filter((b) => b.bundled && b.name !== 'webgpu').map((b) => b.name);
}

function sessionOptions(o: OnnxOptions, device: string): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: o.executionProviders ?? [device],
    graphOptimizationLevel: o.graphOptimizationLevel,
    intraOpNumThreads: o.intraOpNumThreads,
    interOpNumThreads: o.interOpNumThreads,
    executionMode: o.executionMode,
    enableCpuMemArena: o.enableCpuMemArena,
    enableMemPattern: o.enableMemPattern,
    logSeverityLevel: 3,
  };
}

function specs(session: ort.InferenceSession, which: 'inputMetadata' | 'outputMetadata'): PreparedModel['inputs'] {
  return session[which].map((m) => ({
    name: m.name,
    dtype: m.isTensor ? ortTypeToDType(m.type) : 'float32',
    shape: m.isTensor ? m.shape.map((d) => (typeof d === 'number' ? d : d)) : [],
  }));
}

async function prepare(req: PrepareRequest): Promise<PreparedModel> {
  const options = OnnxOptionsSchema.parse(req.options);
  const sessionOpts = sessionOptions(options, req.device);
  const t0 = performance.now();
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(req.model.path, sessionOpts);
  } catch (e) {
    throw new Error(`onnxruntime cannot load ${req.model.path}: ${(e as Error).message}`);
  }
  const compileMs = performance.now() - t0;
  const hr = process.hrtime.bigint;
  // A cell that times out abandons its in-flight run; releasing the session under it crashes onnxruntime-node,
  // so dispose() waits for that run to settle first (in-process runs always finish, if late).
  let inflight: Promise<unknown> = Promise.resolve();
  return {
    inputs: specs(session, 'inputMetadata'),
    outputs: specs(session, 'outputMetadata'),
    compileMs,
    facts: {
      executionProviders: sessionOpts.executionProviders,
      graphOptimizationLevel: options.graphOptimizationLevel,
      intraOpNumThreads: options.intraOpNumThreads,
      interOpNumThreads: options.interOpNumThreads,
      // ORT's 0 means "one thread per physical core"; report what that resolves to for comparisons.
      threads: options.intraOpNumThreads || null,
    },
    // `engine` covers the onnxruntime-node call as a bare loop makes it: wrapping the inputs as ort.Tensor (no copy)
    // and session.run. What remains of `predict` is PBH's own cost: the call and unwrapping the outputs.
    async predict(batch: TensorMap) {
      const t0 = hr();
      const feeds: Record<string, ort.Tensor> = {};
      for (const name in batch) feeds[name] = toOrt(batch[name]!);
      const run = session.run(feeds);
      inflight = run;
      const out = await run;
      const engineNs = hr() - t0;
      return { outputs: fromOrt(out), engineNs };
    },
    async layerProfile(batch: TensorMap, iterations: number) {
      const prefix = path.join(req.model.workDir, 'ort_profile');
      const profiled = await ort.InferenceSession.create(req.model.path, { ...sessionOpts, enableProfiling: true, profileFilePrefix: prefix });
      try {
        const feeds: Record<string, ort.Tensor> = {};
        for (const name in batch) feeds[name] = toOrt(batch[name]!);
        for (let i = 0; i < iterations; i++) await profiled.run(feeds);
        profiled.endProfiling();
      } finally {
        await profiled.release();
      }
      return readOrtProfile(req.model.workDir, prefix, iterations);
    },
    async dispose() {
      await inflight.catch(() => undefined);
      await session.release();
    },
  };
}

export const onnxRuntimeEngine: Engine = {
  name: 'onnxruntime',
  description: 'ONNX Runtime through onnxruntime-node, in the harness process',
  optionsSchema: OnnxOptionsSchema,
  devices: bundledDevices(),
  async probe(): Promise<Availability> {
    return { available: true, version: VERSION, devices: bundledDevices(), details: { binding: 'onnxruntime-node' } };
  },
  prepare,
};
