import type { DuckDBConnection } from '@duckdb/node-api';
import { PAIR_RATIOS_TABLE, VERDICT_BACKFILL, VERDICT_COLUMNS } from './verdict-schema.js';
import { StoreSchemaError, messageOf } from './errors.js';
import { GENERATION_TABLE, GENERATION_V6_COLUMNS, generativeLeaderboard } from './generation-schema.js';
import { ENERGY_BACKFILL, ENERGY_COLUMNS, energyLeaderboard } from './energy-schema.js';

/**
 * One step of the schema. Statements are frozen text: a released migration never changes, a new
 * schema is a new migration, so every file converges to the same schema whatever version it starts at.
 */
export interface Migration {
  version: number;
  description: string;
  statements: readonly string[];
}

/** Latency columns per boundary, flattened from Profile.latency (ns) into milliseconds. */
const latencyColumns = (boundary: string): string =>
  ['mean', 'std', 'p50', 'p90', 'p99'].map((stat) => `${boundary}_${stat}_ms DOUBLE`).join(',\n  ');

const ALL_LATENCY_COLUMNS = ['engine', 'predict', 'end_to_end', 'model_only'].map(latencyColumns).join(',\n  ');

const V1_TABLES = [
  `CREATE TABLE systems (
  system_id VARCHAR PRIMARY KEY,
  hostname VARCHAR NOT NULL,
  cpu_vendor VARCHAR NOT NULL,
  cpu_model VARCHAR NOT NULL,
  cpu_cores INTEGER NOT NULL,
  cpu_physical_cores INTEGER NOT NULL,
  cpu_ghz DOUBLE NOT NULL,
  cpu_flags VARCHAR NOT NULL,
  memory_bytes BIGINT NOT NULL,
  gpus JSON NOT NULL,
  os VARCHAR NOT NULL,
  kernel VARCHAR NOT NULL,
  arch VARCHAR NOT NULL,
  node_version VARCHAR NOT NULL,
  python_version VARCHAR,
  harness_version VARCHAR NOT NULL,
  git_sha VARCHAR,
  peak_flops DOUBLE,
  peak_flops_formula VARCHAR NOT NULL
)`,
  `CREATE TABLE runs (
  run_id VARCHAR PRIMARY KEY,
  name VARCHAR NOT NULL,
  started_at TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ,
  config JSON NOT NULL,
  command VARCHAR NOT NULL,
  harness_version VARCHAR NOT NULL,
  git_sha VARCHAR,
  system_id VARCHAR NOT NULL
)`,
  `CREATE TABLE models (
  model_sha256 VARCHAR PRIMARY KEY,
  size_bytes BIGINT NOT NULL,
  opset INTEGER,
  parameters BIGINT NOT NULL,
  flops_per_sample DOUBLE,
  sparsity_actual DOUBLE NOT NULL,
  sparsity_target DOUBLE,
  sparsity_kind VARCHAR NOT NULL,
  sparsity_n INTEGER,
  sparsity_m INTEGER,
  sparsity_nm_pattern_holds BOOLEAN,
  quantization VARCHAR,
  op_census JSON NOT NULL,
  inputs JSON NOT NULL,
  outputs JSON NOT NULL
)`,
  `CREATE TABLE profiles (
  profile_id VARCHAR PRIMARY KEY,
  run_id VARCHAR NOT NULL,
  cell_key VARCHAR NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  status VARCHAR NOT NULL CHECK (status IN ('ok', 'failed', 'timeout', 'skipped', 'invalid_output')),
  error VARCHAR,
  error_detail VARCHAR,
  system_id VARCHAR NOT NULL,
  model_name VARCHAR NOT NULL,
  model_sha256 VARCHAR,
  model_family VARCHAR,
  model_framework VARCHAR,
  model_weights VARCHAR,
  model_path VARCHAR,
  engine_name VARCHAR NOT NULL,
  engine_version VARCHAR,
  engine_device VARCHAR NOT NULL,
  engine_options JSON NOT NULL,
  engine_compile_ms DOUBLE,
  engine_facts JSON NOT NULL,
  dataset_name VARCHAR NOT NULL,
  dataset_kind VARCHAR NOT NULL,
  dataset_manifest_sha256 VARCHAR,
  dataset_samples INTEGER NOT NULL,
  dataset_preprocess JSON NOT NULL,
  batch_size INTEGER NOT NULL,
  warmup_batches INTEGER NOT NULL,
  session_count INTEGER NOT NULL,
  samples_per_session INTEGER NOT NULL,
  threads INTEGER,
  scenario VARCHAR NOT NULL,
  seed INTEGER NOT NULL,
  correctness_reference_engine VARCHAR,
  correctness_max_abs_error DOUBLE,
  correctness_max_rel_error DOUBLE,
  correctness_atol DOUBLE,
  correctness_rtol DOUBLE,
  correctness_passed BOOLEAN,
  throughput_n INTEGER,
  throughput_mean DOUBLE,
  throughput_std DOUBLE,
  throughput_variance DOUBLE,
  throughput_min DOUBLE,
  throughput_p50 DOUBLE,
  throughput_p90 DOUBLE,
  throughput_p95 DOUBLE,
  throughput_p99 DOUBLE,
  throughput_max DOUBLE,
  throughput_ci95_low DOUBLE,
  throughput_ci95_high DOUBLE,
  ${ALL_LATENCY_COLUMNS},
  peak_rss_mb DOUBLE,
  peak_device_mb DOUBLE,
  cpu_time_ms DOUBLE,
  achieved_flops DOUBLE,
  peak_fraction DOUBLE,
  top1 DOUBLE,
  top5 DOUBLE,
  measured_wall_s DOUBLE,
  latency_json JSON NOT NULL,
  metrics_json JSON NOT NULL,
  config_json JSON NOT NULL,
  command VARCHAR NOT NULL,
  profile_json JSON NOT NULL
)`,
  `CREATE TABLE sessions (
  profile_id VARCHAR NOT NULL,
  session_index INTEGER NOT NULL,
  batches INTEGER NOT NULL,
  samples INTEGER NOT NULL,
  wall_ns DOUBLE NOT NULL,
  throughput_sps DOUBLE NOT NULL,
  ${ALL_LATENCY_COLUMNS},
  latency_json JSON NOT NULL,
  metrics_json JSON NOT NULL,
  PRIMARY KEY (profile_id, session_index)
)`,
  `CREATE TABLE samples (
  profile_id VARCHAR NOT NULL,
  seq INTEGER NOT NULL,
  session INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  boundary VARCHAR NOT NULL CHECK (boundary IN ('engine', 'predict', 'end_to_end', 'model_only')),
  ns DOUBLE NOT NULL CHECK (ns >= 0)
)`,
  `CREATE TABLE layers (
  profile_id VARCHAR NOT NULL,
  seq INTEGER NOT NULL,
  name VARCHAR NOT NULL,
  op_type VARCHAR NOT NULL,
  mean_ns DOUBLE NOT NULL CHECK (mean_ns >= 0),
  calls INTEGER NOT NULL CHECK (calls >= 0),
  share DOUBLE NOT NULL,
  input_shapes VARCHAR,
  output_shapes VARCHAR
)`,
  `CREATE TABLE scores (
  profile_id VARCHAR NOT NULL,
  seq INTEGER NOT NULL,
  metric VARCHAR NOT NULL,
  value DOUBLE NOT NULL,
  samples INTEGER NOT NULL,
  higher_is_better BOOLEAN NOT NULL
)`,
];

/**
 * `leaderboard`: ok Profiles only, best throughput first within each model. Latency figures are the
 * `predict` boundary (what a caller of the harness sees); `overhead_p50_ms` = predict - engine.
 */
const V1_LEADERBOARD = `CREATE VIEW leaderboard AS
SELECT
  p.model_name AS model,
  row_number() OVER (PARTITION BY p.model_name ORDER BY p.throughput_mean DESC NULLS LAST, p.profile_id) AS rank_in_model,
  p.engine_name AS engine,
  p.engine_version,
  p.engine_device AS device,
  p.batch_size,
  p.throughput_mean AS throughput_sps,
  p.throughput_std AS throughput_std_sps,
  p.predict_p50_ms AS p50_ms,
  p.predict_p99_ms AS p99_ms,
  p.engine_p50_ms,
  p.model_only_p50_ms,
  p.predict_p50_ms - p.engine_p50_ms AS overhead_p50_ms,
  p.top1,
  p.top5,
  p.peak_rss_mb,
  p.peak_device_mb,
  p.achieved_flops,
  p.peak_fraction,
  m.sparsity_kind,
  m.sparsity_actual,
  p.engine_compile_ms AS compile_ms,
  p.measured_wall_s,
  r.name AS run_name,
  r.started_at AS run_started_at,
  p.created_at,
  p.status,
  p.run_id,
  p.profile_id
FROM profiles p
LEFT JOIN runs r ON r.run_id = p.run_id
LEFT JOIN models m ON m.model_sha256 = p.model_sha256
WHERE p.status = 'ok'
ORDER BY model, throughput_sps DESC NULLS LAST, p.profile_id`;

/**
 * `comparisons`: within one run, model, batch size and device, every ok engine against a baseline:
 * the reference engine (the Profile's correctness reference, else the run config's reference_engine)
 * when it has an ok Profile there, otherwise the fastest engine. speedup = throughput / baseline throughput.
 */
const V1_COMPARISONS = `CREATE VIEW comparisons AS
WITH ok AS (
  SELECT
    p.profile_id, p.run_id, p.model_name, p.batch_size, p.engine_device, p.engine_name,
    p.throughput_mean, p.predict_p50_ms,
    COALESCE(
      max(p.correctness_reference_engine) OVER (PARTITION BY p.run_id, p.model_name, p.batch_size, p.engine_device),
      json_extract_string(r.config, '$.reference_engine')
    ) AS reference_engine
  FROM profiles p
  LEFT JOIN runs r ON r.run_id = p.run_id
  WHERE p.status = 'ok' AND p.throughput_mean IS NOT NULL
),
ranked AS (
  SELECT *,
    row_number() OVER (
      PARTITION BY run_id, model_name, batch_size, engine_device
      ORDER BY (engine_name = reference_engine) DESC NULLS LAST, throughput_mean DESC, profile_id
    ) AS baseline_rank
  FROM ok
)
SELECT
  o.run_id,
  o.model_name AS model,
  o.batch_size,
  o.engine_device AS device,
  o.engine_name AS engine,
  o.throughput_mean AS throughput_sps,
  o.predict_p50_ms AS p50_ms,
  b.engine_name AS baseline_engine,
  CASE WHEN b.engine_name IS NOT DISTINCT FROM o.reference_engine THEN 'reference' ELSE 'fastest' END AS baseline_kind,
  b.throughput_mean AS baseline_throughput_sps,
  b.predict_p50_ms AS baseline_p50_ms,
  o.throughput_mean / b.throughput_mean AS speedup,
  o.profile_id,
  b.profile_id AS baseline_profile_id
FROM ok o
JOIN ranked b
  ON b.baseline_rank = 1 AND b.run_id = o.run_id AND b.model_name = o.model_name
  AND b.batch_size = o.batch_size AND b.engine_device = o.engine_device
ORDER BY model, o.batch_size, device, o.run_id, speedup DESC, o.profile_id`;

/** v2: precision is part of the cell (asked for and executed), and which process the metrics measured. */
const V2_LEADERBOARD = `CREATE VIEW leaderboard AS
SELECT
  p.model_name AS model,
  row_number() OVER (PARTITION BY p.model_name, coalesce(p.scenario, 'single_stream') ORDER BY p.throughput_mean DESC NULLS LAST, p.profile_id) AS rank_in_model,
  p.engine_name AS engine,
  coalesce(p.engine_label, p.engine_name) AS engine_entry,
  p.engine_version,
  p.engine_device AS device,
  p.precision_executed AS precision,
  p.precision_requested,
  p.batch_size,
  coalesce(p.scenario, 'single_stream') AS scenario,
  p.validity,
  p.scenario_metric,
  p.scenario_value,
  p.throughput_mean AS throughput_sps,
  p.throughput_std AS throughput_std_sps,
  CASE p.headline_boundary WHEN 'engine' THEN p.engine_p50_ms WHEN 'query' THEN p.query_p50_ms ELSE p.predict_p50_ms END AS p50_ms,
  CASE p.headline_boundary WHEN 'engine' THEN p.engine_p99_ms WHEN 'query' THEN p.query_p99_ms ELSE p.predict_p99_ms END AS p99_ms,
  coalesce(p.headline_boundary, 'predict') AS latency_boundary,
  p.engine_p50_ms,
  p.predict_p50_ms,
  p.model_only_p50_ms,
  p.transport_p50_ms,
  p.predict_p50_ms - p.engine_p50_ms AS overhead_p50_ms,
  p.top1,
  p.top5,
  p.peak_rss_mb,
  p.peak_device_mb,
  p.achieved_flops,
  p.peak_fraction,
  m.sparsity_kind,
  m.sparsity_actual,
  p.engine_compile_ms AS compile_ms,
  p.measured_wall_s,
  r.name AS run_name,
  r.started_at AS run_started_at,
  p.created_at,
  p.status,
  p.run_id,
  p.profile_id
FROM profiles p
LEFT JOIN runs r ON r.run_id = p.run_id
LEFT JOIN models m ON m.model_sha256 = p.model_sha256
WHERE p.status = 'ok'
ORDER BY model, throughput_sps DESC NULLS LAST, p.profile_id`;

const V2_COMPARISONS = `CREATE VIEW comparisons AS
WITH ok AS (
  SELECT
    p.profile_id, p.run_id, p.model_name, p.batch_size, p.engine_device, p.engine_name, coalesce(p.engine_label, p.engine_name) AS engine_entry,
    p.throughput_mean, CASE p.headline_boundary WHEN 'engine' THEN p.engine_p50_ms WHEN 'query' THEN p.query_p50_ms ELSE p.predict_p50_ms END AS predict_p50_ms, coalesce(p.scenario, 'single_stream') AS scenario, p.precision_executed,
    COALESCE(
      max(p.correctness_reference_engine) OVER (PARTITION BY p.run_id, p.model_name, p.batch_size, p.engine_device, coalesce(p.scenario, 'single_stream')),
      json_extract_string(r.config, '$.reference_engine')
    ) AS reference_engine
  FROM profiles p
  LEFT JOIN runs r ON r.run_id = p.run_id
  WHERE p.status = 'ok' AND p.throughput_mean IS NOT NULL
),
ranked AS (
  SELECT *,
    row_number() OVER (
      PARTITION BY run_id, model_name, batch_size, engine_device, scenario
      ORDER BY (engine_name = reference_engine) DESC NULLS LAST, throughput_mean DESC, profile_id
    ) AS baseline_rank
  FROM ok
)
SELECT
  o.run_id,
  o.model_name AS model,
  o.batch_size,
  o.scenario,
  o.engine_device AS device,
  o.engine_name AS engine,
  o.engine_entry,
  o.precision_executed AS precision,
  o.throughput_mean AS throughput_sps,
  o.predict_p50_ms AS p50_ms,
  b.engine_name AS baseline_engine,
  b.engine_entry AS baseline_engine_entry,
  b.precision_executed AS baseline_precision,
  CASE WHEN b.engine_name IS NOT DISTINCT FROM o.reference_engine THEN 'reference' ELSE 'fastest' END AS baseline_kind,
  b.throughput_mean AS baseline_throughput_sps,
  b.predict_p50_ms AS baseline_p50_ms,
  o.throughput_mean / b.throughput_mean AS speedup,
  o.profile_id,
  b.profile_id AS baseline_profile_id
FROM ok o
JOIN ranked b
  ON b.baseline_rank = 1 AND b.run_id = o.run_id AND b.model_name = o.model_name
  AND b.batch_size = o.batch_size AND b.engine_device = o.engine_device AND b.scenario = o.scenario
ORDER BY model, o.batch_size, device, o.run_id, speedup DESC, o.profile_id`;

/**
 * v3: the rank is within what a reader compares, model x batch size x scenario x executed precision x hardware
 * (`rank_in_group`), so batch-1 rows read #1, #2 rather than #2, #4 among batch 32's. `hardware` is the CPU model
 * and its logical cores, with the GPUs' models: the systems row without the software versions, which change per commit.
 */
const V3_HARDWARE = `coalesce(s.cpu_model || ' (' || s.cpu_cores || ' threads)' ||
    coalesce(' + ' || nullif(array_to_string(json_extract_string(s.gpus, '$[*].model'), ', '), ''), ''), 'unknown system')`;

const V3_LEADERBOARD = `CREATE VIEW leaderboard AS
SELECT
  p.model_name AS model,
  row_number() OVER (
    PARTITION BY p.model_name, p.batch_size, coalesce(p.scenario, 'single_stream'), p.precision_executed, ${V3_HARDWARE}
    ORDER BY p.throughput_mean DESC NULLS LAST, p.profile_id
  ) AS rank_in_group,
  ${V3_HARDWARE} AS hardware,
  p.engine_name AS engine,
  coalesce(p.engine_label, p.engine_name) AS engine_entry,
  p.engine_version,
  p.engine_device AS device,
  p.precision_executed AS precision,
  p.precision_requested,
  p.batch_size,
  coalesce(p.scenario, 'single_stream') AS scenario,
  p.validity,
  p.scenario_metric,
  p.scenario_value,
  p.throughput_mean AS throughput_sps,
  p.throughput_std AS throughput_std_sps,
  CASE p.headline_boundary WHEN 'engine' THEN p.engine_p50_ms WHEN 'query' THEN p.query_p50_ms ELSE p.predict_p50_ms END AS p50_ms,
  CASE p.headline_boundary WHEN 'engine' THEN p.engine_p99_ms WHEN 'query' THEN p.query_p99_ms ELSE p.predict_p99_ms END AS p99_ms,
  coalesce(p.headline_boundary, 'predict') AS latency_boundary,
  p.engine_p50_ms,
  p.predict_p50_ms,
  p.model_only_p50_ms,
  p.transport_p50_ms,
  p.predict_p50_ms - p.engine_p50_ms AS overhead_p50_ms,
  p.top1,
  p.top5,
  p.peak_rss_mb,
  p.peak_device_mb,
  p.achieved_flops,
  p.peak_fraction,
  m.sparsity_kind,
  m.sparsity_actual,
  p.engine_compile_ms AS compile_ms,
  p.measured_wall_s,
  r.name AS run_name,
  r.started_at AS run_started_at,
  p.created_at,
  p.status,
  p.run_id,
  p.profile_id
FROM profiles p
LEFT JOIN runs r ON r.run_id = p.run_id
LEFT JOIN models m ON m.model_sha256 = p.model_sha256
LEFT JOIN systems s ON s.system_id = p.system_id
WHERE p.status = 'ok'
ORDER BY model, batch_size, scenario, precision, hardware, rank_in_group`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs, systems, models, profiles, sessions, samples, layers, scores; leaderboard and comparisons views',
    statements: [...V1_TABLES, V1_LEADERBOARD, V1_COMPARISONS],
  },
  {
    version: 2,
    description: 'profiles: precision requested/executed/evidence, engine_process, engine_label, scenario and validity, query latency, headline_boundary, transport latency; views show precision and rank by the headline boundary',
    statements: [
      'DROP VIEW leaderboard',
      'DROP VIEW comparisons',
      'ALTER TABLE profiles ADD COLUMN precision_requested VARCHAR',
      'ALTER TABLE profiles ADD COLUMN precision_executed VARCHAR',
      'ALTER TABLE profiles ADD COLUMN precision_evidence VARCHAR',
      'ALTER TABLE profiles ADD COLUMN engine_process VARCHAR',
      'ALTER TABLE profiles ADD COLUMN engine_label VARCHAR',
      'ALTER TABLE profiles ADD COLUMN headline_boundary VARCHAR',
      ...['profiles', 'sessions'].flatMap((table) =>
        ['transport', 'query'].flatMap((boundary) =>
          ['mean', 'std', 'p50', 'p90', 'p99'].map((stat) => `ALTER TABLE ${table} ADD COLUMN ${boundary}_${stat}_ms DOUBLE`),
        ),
      ),
      'ALTER TABLE profiles ADD COLUMN validity VARCHAR',
      'ALTER TABLE profiles ADD COLUMN validity_reasons JSON',
      'ALTER TABLE profiles ADD COLUMN scenario_metric VARCHAR',
      'ALTER TABLE profiles ADD COLUMN scenario_value DOUBLE',
      // DuckDB cannot alter a CHECK constraint: the samples table is rebuilt with the transport boundary allowed.
      `CREATE TABLE samples_v2 (
  profile_id VARCHAR NOT NULL,
  seq INTEGER NOT NULL,
  session INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  boundary VARCHAR NOT NULL CHECK (boundary IN ('engine', 'predict', 'transport', 'end_to_end', 'model_only', 'query')),
  ns DOUBLE NOT NULL CHECK (ns >= 0)
)`,
      'INSERT INTO samples_v2 SELECT profile_id, seq, session, batch, boundary, ns FROM samples',
      'DROP TABLE samples',
      'ALTER TABLE samples_v2 RENAME TO samples',
      V2_LEADERBOARD,
      V2_COMPARISONS,
    ],
  },
  {
    version: 3,
    description: 'leaderboard: rank_in_group within model, batch size, scenario, executed precision and hardware (was rank_in_model); a hardware column',
    statements: ['DROP VIEW leaderboard', V3_LEADERBOARD],
  },
  {
    version: 4,
    description: 'generation: a generate workload\'s TTFT, ITL, TPOT, e2e, tokens/s, goodput, KV cache and perplexity per Profile; leaderboard adds ttft/itl p50 and p99, tokens/s, goodput, perplexity',
    statements: ['DROP VIEW leaderboard', GENERATION_TABLE, generativeLeaderboard(V3_LEADERBOARD)],
  },
  {
    version: 5,
    description: 'profiles: energy_j_per_sample, energy_mean_w, energy_method, energy_reason; leaderboard adds energy_j_per_sample and energy_method',
    statements: ['DROP VIEW leaderboard', ...ENERGY_COLUMNS.map((c) => `ALTER TABLE profiles ADD COLUMN ${c}`), ENERGY_BACKFILL, energyLeaderboard(generativeLeaderboard(V3_LEADERBOARD))],
  },
  {
    version: 6,
    description: 'generation: tpot and e2e p90, bits per byte, the tokenizer, the prompts\' source and the model\'s cache layout',
    statements: GENERATION_V6_COLUMNS.map((c) => `ALTER TABLE generation ADD COLUMN ${c}`),
  },
  {
    version: 7,
    description: 'profiles: the verdicts judged once at assembly (mlperf_validity, noisy, busy, CI half-width), how interleaved rounds stopped, the lead claim; pair_ratios from paired rounds',
    statements: [...VERDICT_COLUMNS.map((c) => `ALTER TABLE profiles ADD COLUMN ${c}`), PAIR_RATIOS_TABLE, ...VERDICT_BACKFILL],
  },
  {
    version: 8,
    description: "runs: how each run ended (finished, interrupted by a signal, killed: closed by a later run that found its scratch orphaned); NULL while it runs",
    statements: ['ALTER TABLE runs ADD COLUMN ended VARCHAR', "UPDATE runs SET ended = 'finished' WHERE finished_at IS NOT NULL"],
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS.reduce((latest, m) => Math.max(latest, m.version), 0);

const CREATE_SCHEMA_VERSION = `CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER PRIMARY KEY,
  description VARCHAR NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)`;

/** Highest applied version, or null when the file has no schema_version table (not a PBH store, or empty). */
export async function currentSchemaVersion(connection: DuckDBConnection): Promise<number | null> {
  const exists = await connection.runAndReadAll(
    `SELECT count(*)::INTEGER FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'schema_version'`,
  );
  if (exists.getRows()[0]?.[0] === 0) return null;
  const reader = await connection.runAndReadAll('SELECT coalesce(max(version), 0)::INTEGER FROM schema_version');
  return Number(reader.getRows()[0]?.[0] ?? 0);
}

/**
 * Brings a read-write store to LATEST_SCHEMA_VERSION: each pending migration and its schema_version
 * row commit together, so a failure leaves the file at the previous version.
 */
export async function migrate(connection: DuckDBConnection, file: string): Promise<{ from: number; to: number }> {
  if ((await currentSchemaVersion(connection)) === null) {
    const tables = await connection.runAndReadAll(`SELECT count(*)::INTEGER FROM information_schema.tables`);
    if (tables.getRows()[0]?.[0] !== 0) {
      throw new StoreSchemaError(
        `${file} is a DuckDB database with tables of its own but no schema_version table, so it is not a PBH database; ` +
          `PBH leaves it untouched. Pass --db with a new file name or an existing PBH database.`,
      );
    }
  }
  await connection.run(CREATE_SCHEMA_VERSION);
  const from = (await currentSchemaVersion(connection)) ?? 0;
  if (from > LATEST_SCHEMA_VERSION) throw newerSchemaError(file, from);
  const pending = [...MIGRATIONS].filter((m) => m.version > from).sort((a, b) => a.version - b.version);
  for (const migration of pending) {
    await connection.run('BEGIN TRANSACTION');
    try {
      for (const statement of migration.statements) await connection.run(statement);
      await connection.run('INSERT INTO schema_version (version, description) VALUES ($1, $2)', [
        migration.version,
        migration.description,
      ]);
      await connection.run('COMMIT');
    } catch (error) {
      await connection.run('ROLLBACK');
      throw new StoreSchemaError(
        `Migrating ${file} to schema v${migration.version} (${migration.description}) failed: ${messageOf(error)}. ` +
          `The file stays at schema v${from}; report this with the message above.`,
        { cause: error },
      );
    }
  }
  return { from, to: Math.max(from, LATEST_SCHEMA_VERSION) };
}

/** A read-only store cannot migrate: it must already be at the version this code reads. */
export async function checkSchemaReadable(connection: DuckDBConnection, file: string): Promise<number> {
  const version = await currentSchemaVersion(connection);
  if (version === null || version === 0) {
    throw new StoreSchemaError(
      `${file} is not a PBH database (it has no schema_version table). Point --db at a file written by pbh run.`,
    );
  }
  if (version > LATEST_SCHEMA_VERSION) throw newerSchemaError(file, version);
  if (version < LATEST_SCHEMA_VERSION) {
    throw new StoreSchemaError(
      `${file} has schema v${version}, this pbh reads v${LATEST_SCHEMA_VERSION}, and a read-only open cannot migrate it. ` +
        `Open it read-write once (any pbh run with --db ${file}) to migrate, then read it again.`,
    );
  }
  return version;
}

function newerSchemaError(file: string, version: number): StoreSchemaError {
  return new StoreSchemaError(
    `${file} has schema v${version}, newer than this pbh knows (v${LATEST_SCHEMA_VERSION}): it was written by a newer pbh. ` +
      `Upgrade pbh, or use another --db file.`,
  );
}
