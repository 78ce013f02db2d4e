import { performance } from 'node:perf_hooks';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { precisionOfDtypes, type Availability, type Engine, type ExecutedPrecision, type PrepareRequest, type PreparedModel, type TensorMap, type TensorSpec } from '@pbh/core';
import { readOrtProfile } from './layers.js';
import { OnnxOptionsSchema, type OnnxOptions } from './options.js';
import { dtypeOfOrt, fromOrt, toOrt } from './tensors.js';

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

function specs(session: ort.InferenceSession, which: 'inputMetadata' | 'outputMetadata'): TensorSpec[] {
  const what = which === 'inputMetadata' ? 'input' : 'output';
  return session[which].map((m) => {
    if (!m.isTensor) throw new Error(`onnxruntime: ${what} "${m.name}" is not a tensor (a sequence or map), which PBH cannot carry`);
    return { name: m.name, dtype: dtypeOfOrt(m.type, `${what} "${m.name}"`), shape: [...m.shape] };
  });
}

/**
 * onnxruntime runs the graph in its own element types: it has no option that converts precision, and PBH sets none.
 * The executed precision is therefore the graph's, read from the session's own metadata.
 */
function graphPrecision(inputs: TensorSpec[], outputs: TensorSpec[]): ExecutedPrecision {
  const tensors = [...outputs, ...inputs];
  const floats = tensors.filter((t) => t.dtype.startsWith('float')).map((t) => `${t.name} ${t.dtype}`);
  return {
    executed: precisionOfDtypes(tensors.map((t) => t.dtype)),
    evidence: `onnxruntime executes the graph's own element types (no precision conversion); session metadata: ${floats.length ? floats.join(', ') : 'no float inputs or outputs'}`,
  };
}

interface SessionIo {
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  precision: ExecutedPrecision;
}

/** The session's specs and precision; throws when PBH cannot carry its tensors or it cannot run the requested precision. */
function sessionIo(session: ort.InferenceSession, req: PrepareRequest): SessionIo {
  const inputs = specs(session, 'inputMetadata');
  const outputs = specs(session, 'outputMetadata');
  const precision = graphPrecision(inputs, outputs);
  if (precision.executed !== req.precision) {
    throw new Error(
      `onnxruntime executes ${req.model.path} in the graph's own precision, ${precision.executed}; it cannot execute it in ${req.precision}: convert the model first, or leave engines[].precision unset`,
    );
  }
  return { inputs, outputs, precision };
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
  let io: SessionIo;
  try {
    io = sessionIo(session, req);
  } catch (e) {
    await session.release();
    throw e;
  }
  const hr = process.hrtime.bigint;
  // A cell that times out abandons its in-flight runs; releasing the session under one crashes onnxruntime-node,
  // so dispose() waits for every run to settle first (in-process runs always finish, if late).
  const inflight = new Set<Promise<unknown>>();
  return {
    inputs: io.inputs,
    outputs: io.outputs,
    compileMs,
    // onnxruntime's Run is thread-safe on one session: concurrent runs are what a server scenario asks of it.
    maxConcurrency: options.parallelRuns,
    // The session runs any batch its graph leaves symbolic on axis 0.
    acceptsSmallerBatch: io.inputs.every((i) => typeof i.shape[0] !== 'number'),
    facts: {
      executionProviders: sessionOpts.executionProviders,
      graphOptimizationLevel: options.graphOptimizationLevel,
      intraOpNumThreads: options.intraOpNumThreads,
      interOpNumThreads: options.interOpNumThreads,
    },
    // ORT's 0 means "one thread per physical core", which onnxruntime-node does not report back.
    threads: options.intraOpNumThreads || null,
    precision: io.precision,
    // `engine` covers the onnxruntime-node call as a bare loop makes it: wrapping the inputs as ort.Tensor (no copy)
    // and session.run. What remains of `predict` is PBH's own cost: the call and unwrapping the outputs.
    async predict(batch: TensorMap) {
      const t0 = hr();
      const feeds: Record<string, ort.Tensor> = {};
      for (const name in batch) feeds[name] = toOrt(batch[name]!);
      const run = session.run(feeds);
      inflight.add(run);
      const out = await run;
      const engineNs = hr() - t0;
      inflight.delete(run);
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
      await Promise.allSettled([...inflight]);
      await session.release();
    },
  };
}

export const onnxRuntimeEngine: Engine = {
  name: 'onnxruntime',
  description: 'ONNX Runtime through onnxruntime-node, in the harness process',
  optionsSchema: OnnxOptionsSchema,
  devices: bundledDevices(),
  precisions: ['fp32'],
  async probe(): Promise<Availability> {
    return { available: true, version: VERSION, devices: bundledDevices(), details: { binding: 'onnxruntime-node' } };
  },
  prepare,
};
