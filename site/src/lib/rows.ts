import { z } from 'zod';

/** Row shapes of the site's queries (see data.ts): DuckDB values as the node API returns them, validated. */

const iso = z.date().transform((date) => date.toISOString());
const num = z.number().nullable();

export const ProfileRowSchema = z.object({
  profile_id: z.string(),
  run_id: z.string(),
  cell_key: z.string(),
  created_at: iso,
  status: z.enum(['ok', 'failed', 'timeout', 'skipped', 'invalid_output']),
  error: z.string().nullable(),
  model_name: z.string(),
  model_sha256: z.string().nullable(),
  model_family: z.string().nullable(),
  engine_name: z.string(),
  engine_version: z.string().nullable(),
  engine_device: z.string(),
  engine_compile_ms: num,
  dataset_name: z.string(),
  batch_size: z.number().int(),
  session_count: z.number().int(),
  samples_per_session: z.number().int(),
  throughput_mean: num,
  throughput_std: num,
  throughput_ci95_low: num,
  throughput_ci95_high: num,
  predict_p50_ms: num,
  predict_p99_ms: num,
  engine_p50_ms: num,
  end_to_end_p50_ms: num,
  model_only_p50_ms: num,
  peak_rss_mb: num,
  peak_device_mb: num,
  achieved_flops: num,
  peak_fraction: num,
  top1: num,
  top5: num,
  command: z.string(),
  system_id: z.string(),
  cpu_model: z.string().nullable(),
  cpu_cores: z.number().int().nullable(),
  gpus: z.string().nullable(),
  hostname: z.string().nullable(),
  sparsity_actual: num,
  sparsity_kind: z.string().nullable(),
  parameters: num,
  flops_per_sample: num,
  run_name: z.string().nullable(),
});
export type ProfileRow = z.output<typeof ProfileRowSchema>;

export const RunRowSchema = z.object({
  run_id: z.string(),
  name: z.string(),
  started_at: iso,
  finished_at: iso.nullable(),
  command: z.string(),
  profiles: z.number().int(),
});
export type RunRow = z.output<typeof RunRowSchema>;

export const SessionThroughputSchema = z.object({
  profile_id: z.string(),
  throughputs: z.array(z.number()),
});

export const ScoreRowSchema = z.object({ profile_id: z.string(), metric: z.string(), value: z.number(), higher_is_better: z.boolean() });

export const SampleListsSchema = z.object({
  profile_id: z.string(),
  session: z.array(z.number().int()),
  batch: z.array(z.number().int()),
  boundary: z.array(z.enum(['engine', 'predict', 'end_to_end', 'model_only'])),
  ns: z.array(z.number()),
});
export type SampleLists = z.output<typeof SampleListsSchema>;

export const ProfileJsonRowSchema = z.object({ profile_id: z.string(), json: z.string() });

export const GpuListSchema = z.array(z.object({ vendor: z.string(), model: z.string(), vram_mb: z.number().nullable() }));
