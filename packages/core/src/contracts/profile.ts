import { z } from 'zod';
import { PrecisionFactsSchema, PrecisionSchema } from './precision.js';
import { TensorSpecSchema } from './tensor.js';
import { ModelSourceSchema } from './model-source.js';
import { StatsSchema } from './stats.js';
import { GenerationResultSchema } from './generation.js';
import { EnergySchema } from './energy.js';

export { StatsSchema, type Stats } from './stats.js';

/**
 * Timing boundaries, each saying what a latency covers: `engine` is measured in the runtime's process around its call
 * (inputs and outputs wrapped as a deployment does) and is the headline; `predict` is the harness's call, IPC included;
 * `transport` is predict - engine per batch (a plain request frame to a worker, or the in-process
 * call), a diagnostic; `end_to_end` is preprocess + predict; `model_only` is a runtime's own loop on one resident input; `query` is a server or offline query's latency, from its scheduled arrival to its completion
 * (queueing included).
 */
export const BoundarySchema = z.enum(['engine', 'predict', 'transport', 'end_to_end', 'model_only', 'query']);
export type Boundary = z.infer<typeof BoundarySchema>;


export const SparsitySchema = z.object({
  /** Fraction of zero weights over all weight tensors of rank >= 2. */
  actual: z.number(),
  target: z.number().nullable(),
  kind: z.enum(['dense', 'unstructured', 'n_m']),
  n: z.number().int().nullable(),
  m: z.number().int().nullable(),
  /** Whether every weight tensor meets the N:M pattern along its input dimension. */
  nm_pattern_holds: z.boolean().nullable(),
  /** How the zeros were made, from the model's pbh.optimization metadata ('obc' | 'magnitude'); null when dense or unknown. */
  method: z.string().nullable().default(null),
});

export const ModelFactsSchema = z.object({
  name: z.string(),
  family: z.string().nullable(),
  framework: z.string().nullable(),
  weights: z.enum(['trained', 'random', 'unknown']),
  path: z.string(),
  sha256: z.string(),
  size_bytes: z.number().int(),
  opset: z.number().int().nullable(),
  inputs: z.array(TensorSpecSchema),
  outputs: z.array(TensorSpecSchema),
  parameters: z.number().int(),
  flops_per_sample: z.number().nullable(),
  /** Integer operations per sample (ConvInteger, MatMulInteger, QLinear*: 1 multiply-add = 2 OPs), counted apart from FLOPs; null: none. */
  int_ops_per_sample: z.number().nullable().optional(),
  /** The input shapes the figures were counted at (the cell's, where the file leaves axes open); absent: the file's own. */
  counted_at: z.record(z.string(), z.array(z.number())).optional(),
  /** What the count says about itself: a lower bound (ops it left out), the If branch it took. */
  flops_note: z.string().nullable().optional(),
  op_census: z.record(z.string(), z.number().int()),
  sparsity: SparsitySchema,
  quantization: z.string().nullable(),
  /** How the graph is quantized (qdq, qoperator, integer_ops, weight_only, reduced_float); absent in older Profiles. */
  quantization_style: z.string().nullable().optional(),
  /** What `pbh quantize` recorded in the file's pbh.optimization (the dtypes read from its graph); null: not quantized by it. */
  quantized: z
    .object({
      method: z.string(),
      scheme: z.string(),
      format: z.string(),
      weight_dtype: z.string().nullable(),
      activation_dtype: z.string().nullable(),
      per_channel: z.boolean(),
      calibration: z.object({ source: z.string(), samples: z.number().int() }).nullable(),
      library: z.string(),
    })
    .nullable()
    .optional(),
  /** A model born in another framework (.pt, .pt2, …): the file the config named and the ONNX export the figures above describe. */
  source: ModelSourceSchema.optional(),
});
export type ModelFacts = z.infer<typeof ModelFactsSchema>;

export const SessionResultSchema = z.object({
  index: z.number().int(),
  batches: z.number().int(),
  samples: z.number().int(),
  wall_ns: z.number(),
  throughput_sps: z.number(),
  latency: z.partialRecord(BoundarySchema, StatsSchema),
  metrics: z.record(z.string(), z.number()),
  /** Which prepared copy of the model ran it (rounds.replicas above 1); absent with one copy. */
  replica: z.number().int().nonnegative().optional(),
});
export type SessionResult = z.infer<typeof SessionResultSchema>;

/** One layer's (kernel's) time as a runtime's profiler reports it. */
export const LayerTimingSchema = z.object({
  name: z.string(),
  op_type: z.string(),
  /** Mean time per iteration in nanoseconds. */
  mean_ns: z.number(),
  calls: z.number().int(),
  input_shapes: z.string().nullable().default(null),
  output_shapes: z.string().nullable().default(null),
});
export type LayerTiming = z.input<typeof LayerTimingSchema>;

/** A layer in the Profile: its timing and its share of the summed layer time. */
export const LayerRowSchema = LayerTimingSchema.extend({ share: z.number() });
export type LayerRow = z.infer<typeof LayerRowSchema>;

export const SystemInfoSchema = z.object({
  hostname: z.string(),
  cpu_vendor: z.string(),
  cpu_model: z.string(),
  cpu_cores: z.number().int(),
  cpu_physical_cores: z.number().int(),
  cpu_ghz: z.number(),
  cpu_flags: z.string(),
  memory_bytes: z.number(),
  gpus: z.array(z.object({ vendor: z.string(), model: z.string(), vram_mb: z.number().nullable() })),
  os: z.string(),
  kernel: z.string(),
  arch: z.string(),
  node_version: z.string(),
  python_version: z.string().nullable(),
  harness_version: z.string(),
  git_sha: z.string().nullable(),
  peak_flops: z.number().nullable(),
  peak_flops_formula: z.string(),
});
export type SystemInfo = z.infer<typeof SystemInfoSchema>;

export const ProfileStatusSchema = z.enum(['ok', 'failed', 'timeout', 'skipped', 'invalid_output']);
export type ProfileStatus = z.infer<typeof ProfileStatusSchema>;

export const ScoreRowSchema = z.object({
  metric: z.string(),
  value: z.number(),
  samples: z.number().int(),
  higher_is_better: z.boolean(),
});

/** A scenario's outcome by LoadGen's rules: the reported figure and whether the run was VALID, with the reasons. */
export const ScenarioResultSchema = z.object({
  kind: z.enum(['single_stream', 'multi_stream', 'server', 'offline']),
  rules: z.enum(['pbh', 'mlperf']),
  settings: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
  /** Where the queries were issued and timed: in the runtime's process, or by the harness's executor. */
  executor: z.enum(['runtime', 'harness']),
  validity: z.enum(['VALID', 'INVALID']),
  reasons: z.array(z.string()),
  /** Mean over sessions of each session's figure (LoadGen percentiles are nearest rank). */
  reported: z.object({ name: z.string(), value: z.number(), unit: z.string() }),
  early_stopping_ms: z.number().nullable(),
  /** Server: how late queries were issued after their scheduled arrival, ns. */
  issue_delay: StatsSchema.nullable(),
  peak_search: z.array(z.object({ target_qps: z.number(), validity: z.enum(['VALID', 'INVALID']), p99_ms: z.number(), reasons: z.array(z.string()) })),
  /** The same run judged by MLPerf's minimums (600 s, MLPerf's query and sample counts), whatever the config set. */
  mlperf: z.object({ validity: z.enum(['VALID', 'INVALID']), reasons: z.array(z.string()) }).nullable().default(null),
});
export type ScenarioResult = z.infer<typeof ScenarioResultSchema>;

/** What the rest of the machine did during one session (or all of them), from /proc/stat, /proc/loadavg and /proc/PID/stat. */
export const InterferenceFiguresSchema = z.object({
  /** Share of the machine's CPU time (every logical CPU) that went to processes other than the measured ones. */
  other_cpu_share: z.number(),
  /** Share of the machine's CPU time the hypervisor stole. */
  steal_share: z.number(),
  /** The 1-minute load average at the end. */
  load_avg_1m: z.number(),
});

/** Interference: a Profile measured while other work competed for the CPU says so (`busy`), like the noisy mark. */
export const InterferenceSchema = InterferenceFiguresSchema.extend({
  /** other_cpu_share + steal_share over the sessions reached `threshold`. */
  busy: z.boolean(),
  threshold: z.number(),
  sessions: z.array(InterferenceFiguresSchema.extend({ index: z.number().int() })),
});
export type Interference = z.infer<typeof InterferenceSchema>;

/**
 * The verdicts, computed once when the Profile is assembled (publish/verdicts.ts) and stored with it: the site, the
 * CLI, `pbh compare` and the demo's summary read these and never judge again. Null in Profiles stored before schema
 * v7 (the store's migration fills its columns from the same rules).
 */
export const VerdictsSchema = z.object({
  /** LoadGen's verdict for the scenario (null: the cell never ran one). */
  validity: z.enum(['VALID', 'INVALID']).nullable(),
  /** The same sessions judged by MLPerf's minimums. */
  mlperf_validity: z.enum(['VALID', 'INVALID']).nullable(),
  /** Too noisy to compare: a session under NOISE_MIN_SESSION_MS, or a throughput CI wider than NOISE_MAX_CI_HALF_WIDTH. */
  noisy: z.boolean(),
  /** The shortest session in ms where it is under the rule's minimum, else null. */
  short_session_ms: z.number().nullable(),
  /** Half-width of the throughput's 95% CI over its mean (null: fewer than one session). */
  ci_half_width: z.number().nullable(),
  /** Other processes' CPU share (and steal) reached the busy threshold during the sessions; null when not measured. */
  busy: z.boolean().nullable(),
});
export type Verdicts = z.infer<typeof VerdictsSchema>;

/** One contender against another of its group, from the rounds both ran: mean over rounds of this/other throughput. */
export const PairRatioSchema = z.object({
  other_profile_id: z.string(),
  other_cell_key: z.string(),
  /** The other contender's engine entry (label, else name) and executed precision, for a reader. */
  other_engine: z.string(),
  other_precision: z.string().nullable(),
  /** Geometric mean over paired rounds of this throughput / the other's, with its 95% Student-t interval on the logs. */
  ratio: z.number(),
  ci95_low: z.number(),
  ci95_high: z.number(),
  rounds: z.number().int(),
  /** faster / slower only when the interval leaves out 1; otherwise tied on this machine. */
  verdict: z.enum(['faster', 'slower', 'tied']),
});
export type PairRatio = z.infer<typeof PairRatioSchema>;

/** How the sessions ran: interleaved rounds in a seeded random order, stopped by the interval or the budget. */
export const RoundsSchema = z.object({
  /** The group's contenders (cell keys) resident together, in the order rounds index them. */
  contenders: z.array(z.string()),
  /** How the group was formed and why (e.g. a second bank where memory did not allow all contenders resident). */
  formed: z.string(),
  /** Prepared copies of this contender its sessions alternated among (rounds.replicas, where its scenario allows). */
  replicas: z.number().int().positive().default(1),
  /** Seed of the rounds' shuffles and each round's order (indices into `contenders`). */
  seed: z.number().int(),
  orders: z.array(z.array(z.number().int())),
  /** Why this contender's rounds ended. */
  stopped: z.enum(['interval', 'budget', 'max_sessions', 'fixed']),
  target_ci_half_width: z.number(),
  ci_half_width: z.number().nullable(),
  budget_s: z.number(),
  /** Timed session seconds this contender spent. */
  spent_s: z.number(),
  /** Per session: ms idle before it beyond settle_ms, until the group's resident processes were quiet (rounds.settle_max_ms). */
  settle_wait_ms: z.array(z.number()).default([]),
  /** Sessions that began with the resident processes still busy when settle_max_ms ran out. */
  settle_busy: z.number().int().default(0),
  /** Level shifts in the per-session throughput (python/changepoints, ruptures PELT); null when detection could not run. */
  level_shifts: z
    .array(z.object({ session: z.number().int(), before: z.number(), after: z.number(), ratio: z.number() }))
    .nullable(),
  level_shifts_note: z.string().nullable(),
  pairs: z.array(PairRatioSchema),
  /**
   * Among contenders of the same executed precision: 'fastest' when this is the top throughput and its paired interval
   * against the runner-up leaves out 1; 'tied' when it is top but the interval holds 1; null otherwise or alone.
   */
  lead: z.object({ claim: z.enum(['fastest', 'tied']), runner_up: z.string(), ratio: z.number(), ci95_low: z.number(), ci95_high: z.number() }).nullable(),
});
export type Rounds = z.infer<typeof RoundsSchema>;

/** One Profile per sweep cell: what was measured, on what, how, and how it went. */
export const ProfileSchema = z.object({
  profile_id: z.string(),
  run_id: z.string(),
  cell_key: z.string(),
  created_at: z.string(),
  status: ProfileStatusSchema,
  error: z.string().nullable(),
  error_detail: z.string().nullable(),
  model: ModelFactsSchema.nullable(),
  model_name: z.string(),
  engine: z.object({
    name: z.string(),
    /** The config entry's label: what tells two entries of one engine apart (null when it has none). */
    label: z.string().nullable().default(null),
    version: z.string().nullable(),
    device: z.string(),
    options: z.record(z.string(), z.unknown()),
    compile_ms: z.number().nullable(),
    facts: z.record(z.string(), z.unknown()),
    /** Null when the cell ended before a precision was resolved (and in Profiles stored before schema v2). */
    precision: PrecisionFactsSchema.nullable().default(null),
    /** The process that runs the model, whose CPU time and memory the metrics report; null when never prepared. */
    process: z.enum(['harness', 'worker']).nullable().default(null),
    /** What the harness called the runtime through (e.g. "onnxruntime-node", "onnxruntime (Python) in a pbh worker"). */
    binding: z.string().nullable().default(null),
  }),
  /** config/keys.ts cellFingerprint: the rest of the config that changes this cell's result; --resume compares it. */
  cell_fingerprint: z.string().nullable().default(null),
  dataset: z.object({
    name: z.string(),
    kind: z.string(),
    manifest_sha256: z.string().nullable(),
    samples: z.number().int(),
    preprocess: z.array(z.unknown()),
  }),
  workload: z.object({
    batch_size: z.number().int(),
    warmup_batches: z.number().int(),
    /** Sessions run: the config's `sessions` is the fewest, interleaved rounds may run more until the interval is met. */
    sessions: z.number().int(),
    /** Samples each timed session ran: the resident performance set (whole batches). */
    samples_per_session: z.number().int(),
    /** Samples the accuracy pass scored: every sample of the dataset, at every batch size. */
    samples_scored: z.number().int().default(0),
    /** How the accuracy pass ran a last batch smaller than the batch size: at its own size, or padded and cut. */
    last_batch: z.enum(['none', 'dynamic', 'padded']).nullable().default(null),
    threads: z.number().int().nullable(),
    scenario: z.string(),
    seed: z.number().int(),
  }),
  correctness: z
    .object({
      reference_engine: z.string(),
      max_abs_error: z.number(),
      max_rel_error: z.number(),
      atol: z.number(),
      rtol: z.number(),
      /** The precision whose arithmetic the tolerance allows for (the executed one), and how it was derived. */
      precision: PrecisionSchema.nullable().default(null),
      tolerance_rule: z.string().default('config tolerance'),
      passed: z.boolean(),
      /** Every output compared on its own. */
      outputs: z
        .array(z.object({ name: z.string(), max_abs_error: z.number(), max_rel_error: z.number(), passed: z.boolean() }))
        .default([]),
    })
    .nullable(),
  /**
   * The boundary throughput, the latency percentiles the leaderboard ranks and the site prints are computed from:
   * `engine` (measured where the runtime lives) whenever the engine reports it, else `predict`.
   */
  headline_boundary: z.enum(['engine', 'predict', 'query']).nullable().default(null),
  /** Null when the cell ended before its scenario ran (and in Profiles stored before schema v2). */
  scenario: ScenarioResultSchema.nullable().default(null),
  throughput: StatsSchema.nullable(),
  latency: z.partialRecord(BoundarySchema, StatsSchema),
  /** A `generate` workload's figures (TTFT, ITL, tokens/s, goodput, perplexity, the token-for-token gate); null otherwise. */
  generation: GenerationResultSchema.nullable().default(null),
  metrics: z.record(z.string(), z.number()),
  /** The rest of the machine's CPU use during the sessions; null when not measured (Profiles stored before it existed, or a machine without /proc). */
  interference: InterferenceSchema.nullable().default(null),
  /** Energy per sample with its method (rapl, nvml_energy, nvml_power, estimated_tdp) per domain; null for Profiles stored before it, and cells that never ran a session. */
  energy: EnergySchema.nullable().default(null),
  scores: z.array(ScoreRowSchema),
  /** FLOP/s achieved: FLOPs (and integer OPs, for quantized models) per sample x throughput. */
  achieved_flops: z.number().nullable(),
  /** achieved_flops / peak.ops_per_s: above 1 the peak is underestimated (system/peak.ts), never beaten. */
  peak_fraction: z.number().nullable(),
  /** The executed precision's theoretical peak the fraction is against; null before Profiles recorded it (fp32's then). */
  peak: z.object({ precision: z.string(), ops_per_s: z.number(), formula: z.string() }).nullable().default(null),
  sessions: z.array(SessionResultSchema),
  /** The verdicts as judged once at assembly; null before schema v7 and for cells that never assembled. */
  verdicts: VerdictsSchema.nullable().default(null),
  /** Interleaved rounds, their seed and order, the stopping rule and the paired ratios; null for Profiles before v7 and non-interleaved workloads. */
  rounds: RoundsSchema.nullable().default(null),
  /** Raw per-batch latencies in ns for every boundary, session-major. */
  samples: z.array(z.object({ session: z.number().int(), batch: z.number().int(), boundary: BoundarySchema, ns: z.number() })),
  layers: z.array(LayerRowSchema),
  system: SystemInfoSchema,
  config: z.record(z.string(), z.unknown()),
  command: z.string(),
});
export type Profile = z.infer<typeof ProfileSchema>;
