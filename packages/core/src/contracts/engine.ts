import type { ExecutedPrecision, Precision } from './precision.js';
import type { GenerationSchedule, GenerationTrace, TextScore } from './generation.js';
import type { LayerTiming } from './profile.js';
import type { Tensor, TensorMap, TensorSpec } from './tensor.js';

export type Availability =
  | { available: true; version: string; devices: string[]; details?: Record<string, string> }
  | { available: false; reason: string; fix: string; version?: string };

export interface ModelRef {
  name: string;
  path: string;
  /** Absolute path of a scratch directory the engine may write into (profiling files, compiled artifacts). */
  workDir: string;
}

export interface PrepareRequest {
  model: ModelRef;
  batchSize: number;
  device: string;
  /** Engine options from the config, already validated by the engine's own optionsSchema. */
  options: Record<string, unknown>;
  /** Input specs after resolving symbolic batch dims, as the harness will feed them. */
  inputs: TensorSpec[];
  seed: number;
  /** The precision to execute in: the config's `engines[].precision`, else the model's own. One of `Engine.precisions`. */
  precision: Precision;
  /** Aborted when the cell times out or the user interrupts: an engine stops compiling (kills its worker). */
  signal?: AbortSignal;
}

export interface PredictResult {
  outputs: TensorMap;
  /** Time spent inside the runtime for this call, as the runtime reports or as measured next to it. */
  engineNs?: bigint;
}

export type { LayerTiming } from './profile.js';

export interface MemorySample {
  /** Resident set size of the process that runs the model. */
  rssBytes: number;
  deviceBytes?: number;
}

/** Model-only timings measured inside the runtime's process with no IPC (worker `bench`). */
export interface ModelOnlyBench {
  /** One duration per iteration; with several requests in flight, the intervals between completions. */
  iterationNs: number[];
}

/**
 * A scenario's queries over the resident batches (LoadGen's issue schedule): which batch each query runs, when it is
 * due, and how many may be in flight.
 */
export interface QuerySchedule {
  /** Resident batch index of each query, in issue order. */
  batches: number[];
  /** When each query is due, ns after the start (all 0: everything at once, as offline issues it). */
  arrivalsNs: number[];
  /** Queries in flight at most (never above the prepared model's maxConcurrency). */
  concurrency: number;
}

/** Per query, ns after the start of the schedule, on the clock of the process that ran it. */
export interface ScheduleTimings {
  issuedNs: number[];
  completedNs: number[];
}

/** A closed-loop session in the runtime's process: resident batches back to back, cycling, until both minimums are met. */
export interface ClosedLoopRequest {
  /** Resident batches to cycle over (0..batches-1); every one runs at least once. */
  batches: number;
  minQueries: number;
  minDurationNs: number;
}

export interface ClosedLoopTimings {
  /** Per query, in issue order (batch = query index mod batches), the runtime's time around its call. */
  engineNs: number[];
  /** From the first query's issue to the last one's completion, on the runtime process's clock. */
  wallNs: number;
}

export interface PreparedModel {
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  compileMs: number;
  /** Engine facts worth recording (resolved options, device string). */
  facts?: Record<string, unknown>;
  /** Threads the runtime runs the model on, as it resolved them (null when it does not say). */
  threads?: number | null;
  /** The precision the runtime executes, read back from it; absent means the engine cannot tell. */
  precision?: ExecutedPrecision;
  predict(batch: TensorMap): Promise<PredictResult>;
  /** Whether predict accepts fewer rows than the prepared batch size (a dynamic batch axis); else the harness pads. */
  acceptsSmallerBatch?: boolean;
  /**
   * Resident samples (LoadGen's query sample library, LoadSamplesToRam): preprocessed batches moved into the
   * runtime's process before anything is timed, replacing any loaded earlier. Engines whose runtime lives in another
   * process implement it with runResident, so the time per batch is measured where the runtime lives and no tensor
   * crosses a pipe inside a timed session; in-process engines need neither (the harness keeps the batches).
   */
  loadResident?(batches: TensorMap[]): Promise<void>;
  /**
   * Runs resident batch `index` (no outputs come back: scoring is a separate pass). engineNs is measured in the
   * runtime's process around the runtime's call, wrapping inputs and outputs as a deployment does.
   */
  runResident?(index: number): Promise<{ engineNs: bigint }>;
  /**
   * Runs one single/multi-stream session in the runtime's process, so no pipe wake-up sits between its queries (the
   * harness then measures the transport per batch separately, outside any tracker).
   */
  runClosedLoop?(request: ClosedLoopRequest): Promise<ClosedLoopTimings>;
  /** Queries the runtime can run at once (parallel runs, infer requests, streams); 1 when absent. */
  maxConcurrency?: number;
  /**
   * Runs a scenario's schedule in the runtime's process on the resident batches, so arrivals, queueing and
   * completions are timed where the runtime lives. Engines without it are driven by the harness's own executor.
   */
  runSchedule?(schedule: QuerySchedule): Promise<ScheduleTimings>;
  layerProfile?(batch: TensorMap, iterations: number): Promise<LayerTiming[]>;
  /**
   * Runs a generation schedule (contracts/generation.ts's LM graph) in the runtime's process, so every step and its
   * timestamp are where the runtime lives. In-process engines need not: the harness runs the same loop on predict.
   */
  generate?(schedule: GenerationSchedule): Promise<GenerationTrace[]>;
  /** Next-token negative log-likelihood of `tokens` in non-overlapping windows of `window` tokens, in the runtime's process. */
  scoreText?(tokens: number[], window: number, cacheShape: number[]): Promise<TextScore>;
  /** Peak/current memory of the process that runs the model, when it is not the harness process. */
  memory?(): Promise<MemorySample>;
  /** PID of the process that runs the model (for CPU time and RSS sampling). */
  pid?(): number;
  bench?(batch: TensorMap, iterations: number): Promise<ModelOnlyBench>;
  /** What the engine's process last said (a worker's stderr tail), attached to a failed or timed-out Profile. */
  diagnostics?(): string;
  dispose(): Promise<void>;
}

export interface Engine {
  name: string;
  description: string;
  /** zod schema (as unknown to keep core free of engine option types) for `engines[].options`. */
  optionsSchema: import('zod').ZodType<Record<string, unknown>>;
  devices: string[];
  /** Precisions a config may ask this engine for on a model stored in fp32. */
  precisions: readonly Precision[];
  probe(): Promise<Availability>;
  prepare(req: PrepareRequest): Promise<PreparedModel>;
}

export type { Tensor, TensorMap, TensorSpec };
