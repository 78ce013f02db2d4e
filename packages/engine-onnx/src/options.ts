import { fileURLToPath } from 'node:url';
import { optionsSchemaOf, readManifest } from '@pbh/core';

/** The worker door's manifest (shipped next to dist/); its options schema serves both doors. */
export const ORT_MANIFEST = fileURLToPath(new URL('../onnxruntime-worker.json', import.meta.url));

const manifest = readManifest(ORT_MANIFEST);

/** Session options PBH exposes, as the manifest declares them; names follow onnxruntime's own SessionOptions. */
export const OnnxOptionsSchema = optionsSchemaOf(manifest, manifest.engines[0]!);

/** What OnnxOptionsSchema parses to (defaults filled): written out for in-process.ts, as the manifest declares it. */
export interface OnnxOptions {
  executionProviders?: ('cpu' | 'cuda' | 'tensorrt' | 'webgpu')[];
  graphOptimizationLevel: 'disabled' | 'basic' | 'extended' | 'layout' | 'all';
  intraOpNumThreads: number;
  interOpNumThreads: number;
  executionMode: 'sequential' | 'parallel';
  enableCpuMemArena: boolean;
  enableMemPattern: boolean;
  parallelRuns: number;
}

export const parseOnnxOptions = (options: unknown): OnnxOptions => OnnxOptionsSchema.parse(options) as unknown as OnnxOptions;
