import { z } from 'zod';
import { PrecisionSchema } from '../contracts/precision.js';
import { EnergyMethodSchema } from '../contracts/energy.js';
import { BoundarySchema, ProfileSchema, ProfileStatusSchema, ScenarioResultSchema, SystemInfoSchema, type Profile } from '../contracts/profile.js';

/**
 * The data a results website is built from, read out of a store by readSiteData(): a published
 * contract, so the site never depends on the store's tables, which migrations are free to change.
 * Bump SITE_DATA_VERSION when a field is removed, renamed or changes meaning or type; a new field
 * is not a new version. Version 2: rank_in_model ranks within (model, scenario), and latency_boundary and
 * headline_boundary may be `query`. Version 3: rank_in_group (within model, batch size, scenario, executed precision
 * and hardware) replaces rank_in_model; hardware names the machine as the leaderboard view does. Version 4: readSiteData
 * gives the samples' session, batch and ns as typed arrays (Int32Array, Int32Array, Float64Array).
 */
export const SITE_DATA_VERSION = 4;

const count = z.number().int();
const num = z.number().nullable();
const HeadlineSchema = ProfileSchema.shape.headline_boundary.unwrap().unwrap();

/** A column of integers or of finite numbers: a typed array as readSiteData gives it, or a list. */
const integers = z.union([z.instanceof(Int32Array), z.array(count)]);
const finites = z.union([
  z.instanceof(Float64Array).refine((column) => column.every(Number.isFinite), { message: 'every value must be a finite number' }),
  z.array(z.number()),
]);

/**
 * A Profile's raw per-batch latencies column by column, in Profile.samples order: holding every Profile's at once stays
 * affordable. readSiteData gives session, batch and ns as typed arrays (mostly views on the columns it read, off the
 * JS heap: millions of samples cost no garbage collection), which is why consumers index them rather than map them.
 */
export const SampleColumnsSchema = z
  .object({
    session: integers,
    batch: integers,
    boundary: z.array(BoundarySchema),
    ns: finites,
  })
  .refine((c) => c.session.length === c.ns.length && c.batch.length === c.ns.length && c.boundary.length === c.ns.length, {
    message: 'session, batch, boundary and ns must have one entry per sample',
  });
export type SampleColumns = z.output<typeof SampleColumnsSchema>;

/** The stored Profile less its raw samples, which travel beside it as SampleColumns. */
export const StoredProfileSchema = ProfileSchema.omit({ samples: true });
export type StoredProfile = z.output<typeof StoredProfileSchema>;

/** One Profile (any status) as the site shows it: the leaderboard's figures flat, then the whole record. */
export const PublishedProfileSchema = z.object({
  profile_id: z.string(),
  run_id: z.string(),
  run_name: z.string().nullable(),
  cell_key: z.string(),
  /** ISO 8601, UTC. */
  created_at: z.string(),
  status: ProfileStatusSchema,
  error: z.string().nullable(),
  model_name: z.string(),
  model_sha256: z.string().nullable(),
  model_family: z.string().nullable(),
  engine_name: z.string(),
  /** The config entry's label; null when the entry has none. */
  engine_label: z.string().nullable(),
  /** The label, else the engine name (the leaderboard view's engine_entry): what tells two entries of one engine apart. */
  engine_entry: z.string(),
  engine_version: z.string().nullable(),
  engine_device: z.string(),
  engine_compile_ms: num,
  /** The precision the runtime executed, read back from it; null when the cell ended before it was resolved, and in Profiles stored before schema v2. */
  precision: PrecisionSchema.nullable(),
  /** The precision the config asked for (the model's own when it said nothing); null as for precision. */
  precision_requested: PrecisionSchema.nullable(),
  dataset_name: z.string(),
  batch_size: count,
  /** The LoadGen scenario the cell ran (single_stream for Profiles stored before scenarios, and for cells that ended before theirs was set). */
  scenario: ScenarioResultSchema.shape.kind,
  /** The scenario's verdict by LoadGen's rules and why it is INVALID; null when the scenario never ran (and before schema v2). */
  validity: ScenarioResultSchema.shape.validity.nullable(),
  validity_reasons: ScenarioResultSchema.shape.reasons.nullable(),
  /** The figure the scenario reports (p90_latency_ms, p99_latency_ms or samples_per_s) and its value; null as for validity. */
  scenario_metric: z.string().nullable(),
  scenario_value: num,
  session_count: count,
  samples_per_session: count,
  /** Samples/s across sessions. */
  throughput_mean: num,
  throughput_std: num,
  throughput_ci95_low: num,
  throughput_ci95_high: num,
  /** The Profile's own headline boundary; null when nothing was measured, and in Profiles stored before schema v2. */
  headline_boundary: HeadlineSchema.nullable(),
  /**
   * The boundary p50_ms and p99_ms are at, as the leaderboard view's latency_boundary says: the headline boundary
   * (query for server and offline: per query, queueing included), or predict for Profiles stored before schema v2
   * (what they were ranked by).
   */
  latency_boundary: HeadlineSchema,
  /** The latency figures the leaderboard prints, milliseconds per batch (per query at `query`) at latency_boundary. */
  p50_ms: num,
  p99_ms: num,
  /** Milliseconds per batch at each boundary; null where the boundary was not measured. */
  predict_p50_ms: num,
  predict_p99_ms: num,
  engine_p50_ms: num,
  engine_p99_ms: num,
  transport_p50_ms: num,
  end_to_end_p50_ms: num,
  model_only_p50_ms: num,
  query_p50_ms: num,
  query_p99_ms: num,
  peak_rss_mb: num,
  peak_device_mb: num,
  achieved_flops: num,
  peak_fraction: num,
  top1: num,
  top5: num,
  /** A generate workload's figures (the generation table, schema v4): ms, output tokens/s, good requests/s, perplexity; null for every other Profile. */
  ttft_p50_ms: num,
  ttft_p99_ms: num,
  itl_p50_ms: num,
  itl_p99_ms: num,
  output_tokens_per_s: num,
  goodput_rps: num,
  perplexity: num,
  /** Joules per sample and mean watts over the counted domains (schema v5); NULL where nothing measured or estimated them (profile.energy.reason says why), and before v5. */
  energy_j_per_sample: num,
  energy_mean_w: num,
  /** How: rapl, nvml_energy, nvml_power, or estimated_tdp (an estimate from TDP, to be labelled so). */
  energy_method: EnergyMethodSchema.nullable(),
  command: z.string(),
  system_id: z.string(),
  cpu_model: z.string().nullable(),
  cpu_cores: count.nullable(),
  gpus: SystemInfoSchema.shape.gpus.nullable(),
  hostname: z.string().nullable(),
  /** CPU model and logical cores, with the GPUs' models (the leaderboard view's hardware); 'unknown system' without a systems row. */
  hardware: z.string(),
  /** From the models table: the first Profile stored for a model file describes it. */
  sparsity_actual: num,
  sparsity_kind: z.string().nullable(),
  parameters: num,
  flops_per_sample: num,
  /**
   * Throughput rank among the ok Profiles of the same model, batch size, scenario, executed precision and hardware
   * (the leaderboard view's rank_in_group); null unless ok.
   */
  rank_in_group: count.nullable(),
  /** Samples/s of each session, in session order. */
  session_throughputs: z.array(z.number()),
  profile: StoredProfileSchema,
  samples: SampleColumnsSchema,
});
export type PublishedProfile = z.output<typeof PublishedProfileSchema>;

export const PublishedRunSchema = z.object({
  run_id: z.string(),
  name: z.string(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  command: z.string(),
  /** Profiles stored for the run, any status. */
  profiles: count,
});
export type PublishedRun = z.output<typeof PublishedRunSchema>;

export const SiteDataSchema = z.object({
  version: z.literal(SITE_DATA_VERSION),
  /** The store's file name, without its folder: published pages do not reveal where results were kept. */
  db_file: z.string(),
  /** Oldest first. */
  profiles: z.array(PublishedProfileSchema),
  /** Oldest first. */
  runs: z.array(PublishedRunSchema),
});
export type SiteData = z.output<typeof SiteDataSchema>;

/** The full Profile, raw samples back in place: what a Profile's download holds. */
export function fullProfile(published: PublishedProfile): Profile {
  const { session, batch, boundary, ns } = published.samples;
  return {
    ...published.profile,
    // The schema holds the four columns to one length.
    samples: Array.from(ns, (value, i) => ({ session: session[i]!, batch: batch[i]!, boundary: boundary[i]!, ns: value })),
  };
}
