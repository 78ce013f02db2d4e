import { z } from 'zod';
import { PrecisionSchema } from '../contracts/precision.js';
import { DTypeSchema } from '../contracts/tensor.js';

/** The store keeps counts and sizes in INTEGER (int32) columns: the schema accepts only what they hold. */
const INT32_MAX = 2 ** 31 - 1;
const Positive = z.number().int().positive().max(INT32_MAX);
const NonNegative = z.number().int().min(0).max(INT32_MAX);

export const SparsityMetaSchema = z.strictObject({
  kind: z.enum(['unstructured', 'n_m']),
  target: z.number().min(0).max(1).optional(),
  n: Positive.optional(),
  m: Positive.optional(),
});

export const PreprocessStepSchema = z.union([
  z.strictObject({ resize: z.tuple([Positive, Positive]).describe('[height, width], bilinear') }),
  z.strictObject({ center_crop: z.union([Positive, z.tuple([Positive, Positive])]) }),
  z.strictObject({ scale: z.number().describe('multiply every value, e.g. 1/255') }),
  z.strictObject({
    normalize: z.strictObject({ mean: z.array(z.number()).min(1), std: z.array(z.number()).min(1) }),
  }),
  z.strictObject({ channels: z.union([z.literal(1), z.literal(3)]).describe('grey -> RGB by repetition, RGB -> grey by luma') }),
  z.strictObject({ layout: z.enum(['NCHW', 'NHWC']) }),
  z.strictObject({ dtype: DTypeSchema.exclude(['float64', 'bool']) }),
]);
export type PreprocessStep = z.infer<typeof PreprocessStepSchema>;

const BatchAxis = z.number().int().min(0).max(31).describe('the axis that holds the samples of a batch (default: 0, or the axis whose symbol is the batch)');
/** A nested array of numbers: a constant input's value (a scalar is a plain number). */
type NumberTree = number | NumberTree[];
const NumberTreeSchema: z.ZodType<NumberTree> = z.lazy(() => z.union([z.number(), z.array(NumberTreeSchema)]));

/**
 * What feeds one model input (`models[].inputs.NAME`): a dataset field stacked on the batch axis; a constant, the
 * same every query (a sample rate, a mode flag); or zeros of the model's shape with the batch bound (a recurrent
 * state at its start: PBH times one step per query and feeds the state as given, never its own output).
 */
export const InputFeedSchema = z.union([
  z.string().min(1).describe('the dataset field of this name, stacked on axis 0'),
  z.strictObject({ field: z.string().min(1), batch_axis: BatchAxis.optional() }),
  z.strictObject({
    constant: NumberTreeSchema.describe('a number (a scalar input) or nested arrays of the input\'s shape'),
    dtype: DTypeSchema.exclude(['bool']),
  }),
  z.strictObject({
    zeros: z.literal(true),
    batch_axis: BatchAxis.optional(),
    shape: z.array(z.union([Positive, z.literal('batch')])).optional().describe("the input's shape where the model leaves axes open, 'batch' for the batch axis"),
  }),
]);
export type InputFeed = z.infer<typeof InputFeedSchema>;

export const ModelSchema = z.strictObject({
  name: z.string().min(1),
  path: z.string().min(1),
  family: z.string().optional(),
  framework: z.string().optional().describe('source framework the ONNX file was exported from'),
  weights: z.enum(['trained', 'random', 'unknown']).default('unknown'),
  optimization: z
    .strictObject({
      sparsity: SparsityMetaSchema.optional(),
      quantization: z.string().optional(),
    })
    .optional(),
  preprocess: z.array(PreprocessStepSchema).optional().describe('overrides the top-level preprocess for this model'),
  input: z.string().optional().describe('the model input that preprocess applies to; defaults to the first input'),
  inputs: z
    .record(z.string(), InputFeedSchema)
    .optional()
    .describe('model input name -> what feeds it: a dataset field (its name, or {field, batch_axis}), {constant, dtype} or {zeros: true}; every other input is fed from the field of its own name'),
});
export type ModelConfig = z.infer<typeof ModelSchema>;

export const DatasetSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('image-folder'),
    name: z.string().optional(),
    root: z.string(),
    labels: z.string().describe('CSV with header "file,label" relative to root'),
    limit: Positive.optional(),
  }),
  z.strictObject({
    kind: z.literal('npy'),
    name: z.string().optional(),
    inputs: z.record(z.string(), z.string()).describe('dataset input name -> .npy path, first axis = samples'),
    labels: z.string().optional(),
    limit: Positive.optional(),
  }),
  z.strictObject({
    kind: z.literal('csv'),
    name: z.string().optional(),
    path: z.string(),
    label_column: z.string().optional(),
    feature_columns: z.array(z.string()).optional().describe('defaults to every column but the label'),
    limit: Positive.optional(),
  }),
  z
    .strictObject({
      kind: z.literal('text'),
      name: z.string().optional(),
      prompts: z
        .string()
        .optional()
        .describe("the requests of a generate workload: JSONL of {\"prompt\": \"...\"} lines (vLLM's custom dataset) or ShareGPT conversations (a JSON array or JSONL; the first human turn is the prompt); each model's tokenizer makes the ids"),
      random: z
        .strictObject({
          input_len: Positive.describe('prompt tokens (vLLM --random-input-len)'),
          range_ratio: z.number().min(0).max(1).default(0).describe('prompt lengths uniform in input_len × [1 − r, 1 + r] (vLLM --random-range-ratio)'),
          num_prompts: Positive.default(16),
          seed: NonNegative.default(0),
        })
        .optional()
        .describe("seeded synthetic prompts (vLLM's random dataset): ids uniform over the model's vocabulary without special tokens; output length is generate.max_new_tokens"),
      held_out: z.string().optional().describe('UTF-8 text the perplexity scorer reads (never trained on)'),
      limit: Positive.optional().describe('first N prompts'),
    })
    .refine((d) => (d.prompts === undefined) !== (d.random === undefined), { message: 'a text dataset takes prompts (a file) or random ({input_len, num_prompts}), exactly one', path: ['prompts'] }),
]);
export type DatasetConfig = z.infer<typeof DatasetSchema>;

export const ScenarioKindSchema = z.enum(['single_stream', 'multi_stream', 'server', 'offline']);
export type ScenarioKind = z.infer<typeof ScenarioKindSchema>;

/**
 * LoadGen's scenarios (loadgen/test_settings.h, mlperf.conf). A query is one batch of the cell's batch size, except
 * multi_stream, whose query is samples_per_query samples run as one batch (batch_sizes do not apply to it).
 */
export const ScenarioSchema = z.union([
  ScenarioKindSchema,
  z.strictObject({
    kind: ScenarioKindSchema,
    samples_per_query: Positive.optional().describe('multi_stream: samples per query (LoadGen default 8)'),
    target_qps: z.number().positive().max(1e7).optional().describe('server: Poisson arrival rate in queries/s; offline: the samples/s expected (LoadGen offline_expected_qps), default the warmup pace'),
    latency_bound_ms: z.number().positive().max(1e7).optional().describe('server: the p99 latency a VALID run stays within (MLPerf default 10 ms)'),
    find_peak: z.boolean().optional().describe('server: binary-search the highest target_qps that is VALID (LoadGen FindPeakPerformance); generate: the highest rate meeting generate.slo'),
    max_concurrency: Positive.optional().describe('server, generate workload: requests in flight at most for this entry, over generate.max_concurrency (a concurrency sweep: one engine entry per value)'),
    min_duration_ms: NonNegative.optional().describe('each session runs, and a VALID run lasts, at least this long (PBH: 200 for streams, 1000 for server; MLPerf: 600000)'),
    min_query_count: Positive.optional().describe("each session issues, and a VALID run has, at least this many queries (PBH's default for streams: early stopping's count, 64 for p90, 662 for p99)"),
  }),
]);
export type ScenarioConfig = z.infer<typeof ScenarioSchema>;

/**
 * The generate workload (a language model with the key-value cache graph of contracts/generation.ts): greedy
 * decoding of every prompt of a `text` dataset. Scenario single_stream runs one request at a time; server issues
 * Poisson arrivals at target_qps requests/s with at most max_concurrency in flight and judges goodput against the SLOs.
 */
export const GenerateSchema = z.strictObject({
  max_new_tokens: Positive.default(32).describe('tokens generated per request (greedy, no stop token)'),
  max_concurrency: Positive.default(4).describe('server: requests in flight at most (their steps interleave)'),
  slo: z
    .strictObject({
      ttft_ms: z.number().positive().optional().describe('time to first token a good request stays within'),
      itl_ms: z.number().positive().optional().describe("a good request's time per output token (vLLM's tpot SLO) stays within"),
    })
    .optional()
    .describe("goodput's SLOs (vLLM bench serve --goodput)"),
  gate_prompts: NonNegative.default(4).describe('prompts whose greedy continuation must match the reference engine token for token (0: no gate)'),
  perplexity: z.boolean().default(true).describe("score the dataset's held_out text (perplexity, nats per token)"),
});
export type GenerateConfig = z.infer<typeof GenerateSchema>;

const distinct = (values: readonly number[]): boolean => new Set(values).size === values.length;

export const EngineEntrySchema = z.strictObject({
  name: z.string().min(1),
  device: z.string().default('cpu'),
  options: z.record(z.string(), z.unknown()).default({}),
  precision: PrecisionSchema.optional().describe("precision to execute in (fp32, bf16, fp16); unset: the model's own, on every engine and CPU"),
  label: z.string().optional().describe('distinguishes two entries of one engine with different options'),
  process: z.enum(['worker', 'harness']).optional().describe("where the model runs: in a worker process or in the harness's own (unset: the engine's default, a worker where it has one)"),
  scenario: ScenarioSchema.optional().describe('overrides the top-level scenario for this engine entry'),
  sweep: z
    .strictObject({
      target_qps: z.array(z.number().positive().max(1e7)).min(1).refine(distinct, 'list each rate once').optional().describe('a rate sweep: one Profile per Poisson rate, labelled "<label> <rate> req/s"'),
      max_concurrency: z.array(Positive).min(1).refine(distinct, 'list each cap once').optional().describe('a concurrency sweep: one Profile per cap on requests in flight, labelled "<label> <n> in flight"; with no rate set, every request is due at once'),
    })
    .optional()
    .describe("a server's load swept in one entry: it becomes one entry per point (every rate by every cap), each a Profile of the same group (config/sweeps.ts)"),
});
export type EngineEntry = z.infer<typeof EngineEntrySchema>;

/** Energy per inference (packages/core/src/energy): RAPL, NVML, else the TDP estimate, each labelled with its method. */
export const EnergyConfigSchema = z.strictObject({
  enabled: z.boolean().default(true).describe('read energy around every session (outside the timed region); false: every Profile says energy was off'),
  tdp_w: z.number().positive().max(10_000).optional().describe("the CPU package's TDP in watts for the estimate; pbh run --tdp-w sets it; unset: the TDP table's row for the CPU model"),
  tdp_threads: Positive.optional().describe('logical CPUs that TDP is shared among (unset: the table row\'s, else this machine\'s)'),
  min_ticks: Positive.default(20).describe('a counter that updated fewer times in a session is not reported as measured (both ends are off by up to one update: at most 2/min_ticks)'),
  poll_ms: Positive.default(1000).describe('how often counters are read between a session\'s start and end, so a RAPL counter cannot wrap twice unseen'),
  idle_baseline_s: z.number().min(0).max(600).default(0).describe('seconds of rest measured before each cell\'s first session as its idle baseline (0: none)'),
});
export type EnergyConfig = z.infer<typeof EnergyConfigSchema>;

/**
 * How sessions run: the contenders of a group (one model and batch size across engines and precisions) resident
 * together, one session each a round in a fresh seeded random order (RMIT, Abedi and Brecht 2017), rounds going on
 * until every contender's 95% throughput interval is within ±target_ci of its mean or its budget is spent.
 */
export const RoundsSchema = z.strictObject({
  interleave: z.boolean().default(true).describe('run a group\'s contenders in interleaved rounds; false: each cell alone, its sessions back to back'),
  target_ci: z.number().positive().max(1).default(0.05).describe('stop once every contender\'s 95% CI of throughput is within ± this share of its mean'),
  budget_s: z.number().positive().max(86_400).default(3).describe('timed session seconds a contender may spend before its rounds stop short of the target'),
  max_sessions: Positive.max(10_000).default(30).describe('the most sessions a contender runs, whatever its interval'),
  replicas: Positive.max(8).default(1).describe('prepared copies of each stream contender (its own worker process, or its own session in the harness), sessions alternating among them: a copy\'s own luck (process, memory placement) averages out instead of deciding a run (Kalibera and Jones 2013)'),
  settle_ms: NonNegative.max(10_000).default(20).describe('idle ms before a session that follows another contender\'s, or another copy\'s of the same contender (rounds.replicas): the last one\'s thread pools stop spinning (ONNX Runtime, TVM, TBB) before the next is timed; 0: back to back'),
  settle_max_ms: NonNegative.max(10_000).default(500).describe('after settle_ms, wait up to this many ms more until the group\'s resident processes are quiet (under a quarter of a core over 10 ms): a pool that spins long after its session (TVM\'s workers yield 300,000 times before sleeping) would take a core from the contender timed next; 0: settle_ms alone'),
  max_resident: Positive.max(64).default(8).describe('the most contenders prepared and resident at once; a larger group runs in banks of this size'),
  min_free_memory_mb: NonNegative.default(1024).describe('no further contender is prepared into a bank once free memory is below this; the rest form the next bank'),
});
export type RoundsConfig = z.infer<typeof RoundsSchema>;

export const ExperimentSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  seed: NonNegative.default(0),
  plugins: z.array(z.string()).default([]).describe('extra plugins: package names, or paths starting with . or / relative to this file'),
  dataset: DatasetSchema,
  preprocess: z.array(PreprocessStepSchema).default([]),
  models: z.array(ModelSchema).min(1),
  engines: z.array(EngineEntrySchema).min(1),
  batch_sizes: z.array(z.number().int().max(INT32_MAX)).min(1),
  exclude: z
    .array(
      z.strictObject({
        model: z.string().optional(),
        engine: z.string().optional().describe('engine name, or its label when it has one'),
        batch_size: z.number().int().max(INT32_MAX).optional(),
        reason: z.string().optional().describe('why these cells are left out: the site lists them with it on model and engine pages'),
      }),
    )
    .default([])
    .describe('cells to leave out of the sweep: each entry drops the cells that match all of its fields'),
  generate: GenerateSchema.optional().describe('run the generate workload (TTFT, inter-token latency, tokens/s) instead of batches; needs a text dataset and batch_sizes [1]'),
  warmup_batches: NonNegative.default(5),
  sessions: Positive.default(5).describe('the fewest sessions (rounds) a contender runs; more follow until its throughput interval meets rounds.target_ci or its budget is spent'),
  rounds: RoundsSchema.prefault({}).describe('interleaved, randomized rounds of sessions, stopped by the throughput interval within a budget (harness/rounds.ts)'),
  timeout_s: z.number().positive().max(2_000_000).default(300).describe("per cell; at most 2,000,000 s (a Node timer holds up to 2^31 ms)"),
  scorers: z
    .array(
      z.union([
        z.string(),
        z.strictObject({ name: z.string(), output: z.string().describe('model output the scorer reads; default: the first') }),
      ]),
    )
    .default([])
    .describe('top1, top5 (any topK), mse, mae, agreement; each reads the first output unless given {name, output}'),
  mlperf_rules: z
    .boolean()
    .default(false)
    .describe("judge validity by MLPerf's rules (600 s minimum duration, MLPerf query and sample counts); pbh run --mlperf sets it"),
  scenario: ScenarioSchema.default('single_stream').describe('LoadGen scenario: single_stream, multi_stream, server or offline (or {kind, ...settings})'),
  performance_samples: Positive.optional().describe(
    'samples resident for the timed sessions (LoadGen performance sample count), rounded down to whole batches; default: every whole batch that fits in 1 GiB of preprocessed tensors',
  ),
  metrics: z.array(z.string()).default(['cpu_time', 'peak_memory']).describe('Performance Tracker metrics started and stopped around every session; throughput and latency are always measured'),
  reference_engine: z.string().default('onnxruntime'),
  tolerance: z.strictObject({ atol: z.number().min(0).default(1e-3), rtol: z.number().min(0).default(1e-3) }).default({ atol: 1e-3, rtol: 1e-3 }),
  layer_profile: z.strictObject({ enabled: z.boolean().default(true), iterations: Positive.default(10) }).default({ enabled: true, iterations: 10 }),
  energy: EnergyConfigSchema.default({ enabled: true, min_ticks: 20, poll_ms: 1000, idle_baseline_s: 0 }),
});
export type Experiment = z.infer<typeof ExperimentSchema>;
export type ExperimentInput = z.input<typeof ExperimentSchema>;
