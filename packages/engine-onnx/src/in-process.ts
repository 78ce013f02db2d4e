import { performance } from 'node:perf_hooks';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { inProcessSystem, type PrepareRequest, type PreparedModel, type TensorMap, type TensorSpec } from '@pbh/core';
import { readOrtProfile } from './layers.js';
import type { OnnxOptions } from './options.js';
import { acceptsSmallerBatch, checkPrecision, sessionPrecision } from './precision.js';
import { dtypeOfOrt, fromOrt, toOrt } from './tensors.js';

export const ORT_NODE_VERSION = ort.env.versions.common;

export function bundledDevices(): string[] {
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

/** Per-layer timings from onnxruntime's profiler, on a second session through onnxruntime-node (outside any session). */
async function ortLayers(req: PrepareRequest, options: OnnxOptions, batch: TensorMap, iterations: number) {
  const prefix = path.join(req.model.workDir, 'ort_profile');
  const profiled = await ort.InferenceSession.create(req.model.path, { ...sessionOptions(options, req.device), enableProfiling: true, profileFilePrefix: prefix });
  try {
    const feeds: Record<string, ort.Tensor> = {};
    for (const name in batch) feeds[name] = toOrt(batch[name]!);
    for (let i = 0; i < iterations; i++) await profiled.run(feeds);
    profiled.endProfiling();
  } finally {
    await profiled.release();
  }
  return readOrtProfile(req.model.workDir, prefix, iterations);
}

function feedsOf(batch: TensorMap): Record<string, ort.Tensor> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const name in batch) feeds[name] = toOrt(batch[name]!);
  return feeds;
}

/** ONNX Runtime in the harness's own process, through onnxruntime-node's async N-API call. */
export async function prepareInProcess(req: PrepareRequest, options: OnnxOptions): Promise<PreparedModel> {
  const sessionOpts = sessionOptions(options, req.device);
  const t0 = performance.now();
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(req.model.path, sessionOpts);
  } catch (e) {
    throw new Error(`onnxruntime cannot load ${req.model.path}: ${(e as Error).message}`);
  }
  const compileMs = performance.now() - t0;
  let inputs: TensorSpec[];
  let outputs: TensorSpec[];
  let precision: Awaited<ReturnType<typeof sessionPrecision>>;
  try {
    inputs = specs(session, 'inputMetadata');
    outputs = specs(session, 'outputMetadata');
    precision = await sessionPrecision(req.model.path, sessionOpts, options.graphOptimizationLevel, req.model.workDir, inputs, outputs);
    checkPrecision(precision, req.precision, req.model.path);
  } catch (e) {
    await session.release();
    throw e;
  }
  const hr = process.hrtime.bigint;
  // A cell that times out abandons its in-flight runs; releasing the session under one crashes onnxruntime-node,
  // so dispose() waits for every run to settle first (in-process runs always finish, if late).
  const inflight = new Set<Promise<unknown>>();
  const tracked = <T>(run: Promise<T>): Promise<T> => {
    inflight.add(run);
    return run.finally(() => inflight.delete(run));
  };
  const system = inProcessSystem(
    {
      // The resident call is session.run on feeds wrapped once, as a bare onnxruntime-node loop makes it.
      bind(batch) {
        const feeds = feedsOf(batch);
        return () => tracked(session.run(feeds));
      },
      async infer(batch) {
        const start = hr();
        const out = await tracked(session.run(feedsOf(batch)));
        return { outputs: fromOrt(out), engineNs: hr() - start };
      },
    },
    // onnxruntime's Run is thread-safe on one session: concurrent runs are what a server scenario asks of it.
    { engine: 'onnxruntime', maxConcurrency: options.parallelRuns, signal: req.signal },
  );
  return {
    inputs,
    outputs,
    compileMs,
    facts: {
      executionProviders: sessionOpts.executionProviders,
      graphOptimizationLevel: options.graphOptimizationLevel,
      intraOpNumThreads: options.intraOpNumThreads,
      interOpNumThreads: options.interOpNumThreads,
    },
    // ORT's 0 means "one thread per physical core", which onnxruntime-node does not report back.
    threads: options.intraOpNumThreads || null,
    precision,
    runsIn: { process: 'harness', binding: 'onnxruntime-node', pid: process.pid },
    capabilities: { smallerBatch: acceptsSmallerBatch(inputs), maxConcurrency: options.parallelRuns },
    ...system,
    probes: {
      modelOnly: null,
      layers: (batch, iterations) => ortLayers(req, options, batch, iterations),
      memory: async () => ({ rssBytes: process.memoryUsage.rss() }),
    },
    generator: null,
    diagnostics: () => '',
    async dispose() {
      await Promise.allSettled([...inflight]);
      await session.release();
    },
  };
}
