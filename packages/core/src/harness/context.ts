import path from 'node:path';
import type { Availability, Engine, EngineProcess } from '../contracts/engine.js';
import type { Clock } from '../contracts/clock.js';
import type { Dataset } from '../contracts/dataset.js';
import type { ModelFacts, SystemInfo } from '../contracts/profile.js';
import type { ModelConfig } from '../config/schema.js';
import type { LoadedExperiment } from '../config/load.js';
import type { Registry } from '../plugins/registry.js';
import { stat } from 'node:fs/promises';
import { ModelFileError, modelFacts } from './model-facts.js';
import { convertModel, converterFor, type Converter } from '../model/convert.js';
import type { ReferenceOutputs } from './reference.js';
import type { Detection, SeriesValues } from '../history/detect.js';

export type CellProgress = { kind: 'phase'; phase: string } | { kind: 'session'; index: number; of: number };

/** What every cell of one sweep shares; probes and model analyses are done once per sweep. */
export interface SweepContext {
  runId: string;
  loaded: LoadedExperiment;
  registry: Registry;
  system: SystemInfo;
  dataset: Dataset | Error;
  models: Map<string, Promise<ModelFacts>>;
  probes: Map<string, Promise<Availability>>;
  reference: ReferenceOutputs;
  workRoot: string;
  command: (cellKey: string) => string;
  onProgress?: (e: CellProgress) => void;
  /** The harness's clock (preprocessing, the transport probe); tests inject one that never waits. */
  clock?: Clock;
  /** Level shifts within a cell's sessions: python/changepoints (history/detect.ts) unless a test injects its own. */
  detectShifts?: (series: SeriesValues[]) => Promise<Detection>;
}

export function probeOnce(ctx: SweepContext, engine: Engine, process: EngineProcess): Promise<Availability> {
  const key = `${engine.name}\0${process}`;
  let p = ctx.probes.get(key);
  if (!p) {
    p = engine.probe(process).catch((e: unknown): Availability => ({ available: false, reason: (e as Error).message, fix: 'npx pbh doctor' }));
    ctx.probes.set(key, p);
  }
  return p;
}

/** Models born in other frameworks (.pt, .pt2, …) against their ONNX exports, filled by modelFactsOnce before a plan reads modelPath. */
const exported = new Map<string, string>();

/** The model file engines are given: the config's, or for a converted format its ONNX export (whose metadata names the source). */
export function modelPath(ctx: SweepContext, model: ModelConfig): string {
  const file = path.resolve(ctx.loaded.dir, model.path);
  return exported.get(file) ?? file;
}

export function modelFactsOnce(ctx: SweepContext, model: ModelConfig): Promise<ModelFacts> {
  const file = path.resolve(ctx.loaded.dir, model.path);
  const key = `${file}\0${model.name}`;
  let p = ctx.models.get(key);
  if (!p) {
    const converter = converterFor(file);
    p = converter ? convertedModelFacts(model, file, converter) : modelFacts(model, file);
    ctx.models.set(key, p);
  }
  return p;
}

/** A converted format is exported to ONNX once (cached on disk), analysed as that export, and its source recorded. */
async function convertedModelFacts(model: ModelConfig, file: string, converter: Converter): Promise<ModelFacts> {
  if (!(await stat(file).catch(() => undefined))) {
    throw new ModelFileError(`model "${model.name}": ${file} does not exist. Fix models[].path (relative to the config file).`);
  }
  const done = await convertModel(file, converter).catch((e: unknown) => {
    throw new ModelFileError(`model "${model.name}": ${(e as Error).message}`);
  });
  exported.set(file, done.onnx_path);
  const facts = await modelFacts({ ...model, framework: model.framework ?? converter.framework }, done.onnx_path);
  const { onnx_path: onnxPath, input_names: _inputs, output_names: _outputs, ...record } = done;
  return { ...facts, source: { path: file, onnx_path: onnxPath, ...record } };
}
