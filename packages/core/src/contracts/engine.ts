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
  /** Where to run the model: one of `Engine.processes`. */
  process: EngineProcess;
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

/** Where the runtime runs and what the harness calls it through: an axis of the cell, recorded in the Profile. */
export type EngineProcess = 'harness' | 'worker';

export interface RunsIn {
  process: EngineProcess;
  /** The binding the harness calls, e.g. "onnxruntime-node" or "onnxruntime (Python) in a pbh worker". */
  binding: string;
  /** PID of the process that runs the model (for CPU time, RSS and interference). */
  pid: number;
}

/**
 * LoadGen's query sample library: the performance set made resident in the runtime's process before anything is
 * timed (LoadSamplesToRam), replacing any set loaded earlier, and released after (UnloadSamplesFromRam).
 */
export interface SampleLibrary {
  load(batches: TensorMap[]): Promise<void>;
  unload(): Promise<void>;
}

/**
 * LoadGen's system under test, over the resident batches. Every engine implements all of it; each call runs and is
 * timed in the runtime's process (a worker's own loop, or the harness for an in-process binding).
 */
export interface SystemUnderTest {
  /** A single/multi-stream session (also warmup): resident batches back to back, cycling, until both minimums are met. */
  closedLoop(request: ClosedLoopRequest): Promise<ClosedLoopTimings>;
  /** A server/offline schedule: each query issued when due with at most `concurrency` in flight, FIFO. */
  schedule(schedule: QuerySchedule): Promise<ScheduleTimings>;
  /** Resident batch `index` once, issued by the harness: the transport diagnostic (the harness's time less engineNs). */
  issue(index: number): Promise<{ engineNs: bigint }>;
  /** One inference on a batch the harness holds, outputs back: the correctness gate, references and the accuracy pass. */
  infer(batch: TensorMap): Promise<PredictResult>;
}

/** Measurements outside the ranked sessions. A probe the engine lacks is declared null. */
export interface Probes {
  /** The runtime's own model-only loop on one input, no harness in between (e.g. benchmark_app's or time_evaluator's). */
  modelOnly: ((batch: TensorMap, iterations: number) => Promise<ModelOnlyBench>) | null;
  /** Per-layer (per-kernel) timings from the runtime's profiler. */
  layers: ((batch: TensorMap, iterations: number) => Promise<LayerTiming[]>) | null;
  /** Memory of the process that runs the model. */
  memory(): Promise<MemorySample>;
}

/** A generation loop in the runtime's process (contracts/generation.ts's LM graph); null runs the harness's loop on infer. */
export interface Generator {
  /** interleaved: requests' steps interleave up to the schedule's concurrency; one_at_a_time: the runtime's own loop serves each request whole; batched: the runtime batches up to the schedule's concurrency itself; server: a server, sent the schedule's requests concurrently. */
  serves: 'interleaved' | 'one_at_a_time' | 'batched' | 'server';
  generate(schedule: GenerationSchedule): Promise<GenerationTrace[]>;
  /** Next-token negative log-likelihood of `tokens` in non-overlapping windows of `window` tokens; null: the runtime gives no logits. */
  scoreText: ((tokens: number[], window: number, cacheShape: number[] | null) => Promise<TextScore>) | null;
  /** Each continuation token's rank under teacher forcing (0: the argmax); null: the runtime gives no logits. */
  rankTokens: ((prompt: number[], continuation: number[]) => Promise<number[]>) | null;
}

/** What the prepared model can do beyond what every one must, declared by the engine. */
export interface Capabilities {
  /** infer accepts fewer rows than the prepared batch size (a dynamic batch axis); else the harness pads. */
  smallerBatch: boolean;
  /** Queries the runtime can run at once (parallel runs, infer requests, streams); a schedule's concurrency at most. */
  maxConcurrency: number;
}

export interface PreparedModel {
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  compileMs: number;
  /** Engine facts worth recording (resolved options, device string). */
  facts: Record<string, unknown>;
  /** Threads the runtime runs the model on, as it resolved them (null when it does not say). */
  threads: number | null;
  /** The precision the runtime executes, read back from it; null when the engine cannot tell. */
  precision: ExecutedPrecision | null;
  runsIn: RunsIn;
  capabilities: Capabilities;
  library: SampleLibrary;
  sut: SystemUnderTest;
  probes: Probes;
  generator: Generator | null;
  /** What the engine's process last said (a worker's stderr tail), attached to a failed or timed-out Profile. */
  diagnostics(): string;
  dispose(): Promise<void>;
}

export interface Engine {
  name: string;
  description: string;
  /** Where this engine can run the model, the default first (`engines[].process` picks another). */
  processes: readonly EngineProcess[];
  /** zod schema (as unknown to keep core free of engine option types) for `engines[].options`. */
  optionsSchema: import('zod').ZodType<Record<string, unknown>>;
  devices: string[];
  /** Precisions a config may ask this engine for on a model stored in fp32. */
  precisions: readonly Precision[];
  /** Whether the engine can run here, in that process. */
  probe(process: EngineProcess): Promise<Availability>;
  prepare(req: PrepareRequest): Promise<PreparedModel>;
}

export type { Tensor, TensorMap, TensorSpec };
