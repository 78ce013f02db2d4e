import path from 'node:path';
import type { Availability, Engine, EngineProcess } from '../contracts/engine.js';
import type { Clock } from '../contracts/clock.js';
import type { Dataset } from '../contracts/dataset.js';
import type { ModelFacts, SystemInfo } from '../contracts/profile.js';
import type { ModelConfig } from '../config/schema.js';
import type { LoadedExperiment } from '../config/load.js';
import type { Registry } from '../plugins/registry.js';
import { modelFacts } from './model-facts.js';
import type { ReferenceOutputs } from './reference.js';

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

export function modelPath(ctx: SweepContext, model: ModelConfig): string {
  return path.resolve(ctx.loaded.dir, model.path);
}

export function modelFactsOnce(ctx: SweepContext, model: ModelConfig): Promise<ModelFacts> {
  const file = modelPath(ctx, model);
  const key = `${file}\0${model.name}`;
  let p = ctx.models.get(key);
  if (!p) {
    p = modelFacts(model, file);
    ctx.models.set(key, p);
  }
  return p;
}
