import type { Dataset } from '../contracts/dataset.js';
import type { EngineProcess, PreparedModel } from '../contracts/engine.js';
import type { Precision } from '../contracts/precision.js';
import type { TensorMap, TensorSpec } from '../contracts/tensor.js';
import type { ModelConfig } from '../config/schema.js';
import type { Registry } from '../plugins/registry.js';
import { predictRows } from './batching.js';
import type { Feeder } from './feeds.js';

export interface ReferenceKey {
  modelPath: string;
  model: ModelConfig;
  batchSize: number;
  feeder: Feeder;
  dataset: Dataset;
  /** Input specs with symbolic dims resolved. */
  inputs: TensorSpec[];
  /** The model's own precision: the reference always executes it. */
  precision: Precision;
}

/**
 * Outputs of the reference engine (default options) per (model, batch size, rows [start, start+rows)), computed on
 * demand and cached for the sweep, so the correctness gate and the agreement scorer never time the reference. The
 * harness releases the prepared reference before each measurement; cached outputs make a second prepare rare.
 */
export class ReferenceOutputs {
  private readonly outputs = new Map<string, Map<number, TensorMap>>();
  private current: { id: string; prepared: PreparedModel } | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly engineName: string,
    private readonly workDir: string,
    private readonly seed: number,
    /** Where the reference runs: its config entry's `process`, else the engine's default. */
    private readonly process?: EngineProcess,
  ) {}

  private async preparedFor(key: ReferenceKey, id: string): Promise<PreparedModel> {
    if (this.current?.id === id) return this.current.prepared;
    await this.release();
    const engine = this.registry.engine(this.engineName);
    const process = this.process ?? engine.processes[0]!;
    const availability = await engine.probe(process);
    if (!availability.available) {
      throw new Error(`reference engine ${this.engineName} is unavailable (${availability.reason}); set reference_engine to an available engine. Fix: ${availability.fix}`);
    }
    const prepared = await engine.prepare({
      model: { name: key.model.name, path: key.modelPath, workDir: this.workDir },
      batchSize: key.batchSize,
      device: 'cpu',
      options: engine.optionsSchema.parse({}),
      process,
      inputs: key.inputs,
      seed: this.seed,
      precision: key.precision,
    });
    this.current = { id, prepared };
    return prepared;
  }

  async rows(key: ReferenceKey, start: number, rows: number): Promise<TensorMap> {
    const id = `${key.modelPath}\0${key.model.name}\0${key.batchSize}`;
    let cache = this.outputs.get(id);
    if (!cache) {
      cache = new Map();
      this.outputs.set(id, cache);
    }
    const hit = cache.get(start);
    if (hit) return hit;
    const prepared = await this.preparedFor(key, id);
    const outputs = await predictRows(prepared, key.feeder.feed(key.dataset.read(start, rows)), rows, key.batchSize, key.feeder.batchAxes);
    cache.set(start, outputs);
    return outputs;
  }

  async release(): Promise<void> {
    const cur = this.current;
    this.current = undefined;
    if (cur) await cur.prepared.dispose();
  }
}
