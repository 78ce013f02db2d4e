import { createHash } from 'node:crypto';
import { canonicalJson } from '../encoding/canonical-json.js';
import { BoundarySchema, type Boundary, ModelFacts, Profile, SessionResult, Stats, SystemInfo } from '../contracts/profile.js';

/** A value bound to one column of an INSERT. */
export type Cell = string | number | boolean | null;
export type Row = Record<string, Cell>;

const BOUNDARIES: readonly Boundary[] = BoundarySchema.options;
const FLATTENED_LATENCY_STATS = ['mean', 'std', 'p50', 'p90', 'p99'] as const;
const NS_PER_MS = 1e6;

/**
 * Profile.metrics entries the store copies into their own profiles columns (all of them stay in
 * metrics_json). Keys are column names, values the metric names the built-in metrics produce.
 */
export const STORED_METRIC_NAMES = {
  peak_rss_mb: 'peak_rss_mb',
  peak_device_mb: 'device_peak_mb',
  cpu_time_ms: 'cpu_time_ms',
} as const;

/** Profile.scores metrics copied into profiles.top1 / profiles.top5. */
export const STORED_SCORE_NAMES = { top1: 'top1', top5: 'top5' } as const;

export function systemId(system: SystemInfo): string {
  return createHash('sha256').update(canonicalJson(system)).digest('hex');
}

export function systemRow(system: SystemInfo): Row {
  return {
    system_id: systemId(system),
    hostname: system.hostname,
    cpu_vendor: system.cpu_vendor,
    cpu_model: system.cpu_model,
    cpu_cores: system.cpu_cores,
    cpu_physical_cores: system.cpu_physical_cores,
    cpu_ghz: system.cpu_ghz,
    cpu_flags: system.cpu_flags,
    memory_bytes: system.memory_bytes,
    gpus: JSON.stringify(system.gpus),
    os: system.os,
    kernel: system.kernel,
    arch: system.arch,
    node_version: system.node_version,
    python_version: system.python_version,
    harness_version: system.harness_version,
    git_sha: system.git_sha,
    peak_flops: system.peak_flops,
    peak_flops_formula: system.peak_flops_formula,
  };
}

export function modelRow(model: ModelFacts): Row {
  return {
    model_sha256: model.sha256,
    size_bytes: model.size_bytes,
    opset: model.opset,
    parameters: model.parameters,
    flops_per_sample: model.flops_per_sample,
    sparsity_actual: model.sparsity.actual,
    sparsity_target: model.sparsity.target,
    sparsity_kind: model.sparsity.kind,
    sparsity_n: model.sparsity.n,
    sparsity_m: model.sparsity.m,
    sparsity_nm_pattern_holds: model.sparsity.nm_pattern_holds,
    quantization: model.quantization,
    op_census: JSON.stringify(model.op_census),
    inputs: JSON.stringify(model.inputs),
    outputs: JSON.stringify(model.outputs),
  };
}

/** `<boundary>_<stat>_ms` columns for every boundary; null where the boundary was not measured. */
function latencyCells(latency: Partial<Record<Boundary, Stats>>): Row {
  const row: Row = {};
  for (const boundary of BOUNDARIES) {
    const stats = latency[boundary];
    for (const stat of FLATTENED_LATENCY_STATS) {
      row[`${boundary}_${stat}_ms`] = stats === undefined ? null : stats[stat] / NS_PER_MS;
    }
  }
  return row;
}

function throughputCells(throughput: Stats | null): Row {
  const keys = ['n', 'mean', 'std', 'variance', 'min', 'p50', 'p90', 'p95', 'p99', 'max', 'ci95_low', 'ci95_high'] as const;
  return Object.fromEntries(keys.map((key) => [`throughput_${key}`, throughput === null ? null : throughput[key]]));
}

function scoreValue(profile: Profile, metric: string): number | null {
  return profile.scores.find((score) => score.metric === metric)?.value ?? null;
}

/**
 * The Profile as stored in profile_json: everything but the raw samples, which live in `samples`
 * (one row each, in order) so a Profile's JSON stays small however many batches it timed.
 */
export function profileJsonWithoutSamples(profile: Profile): string {
  const { samples: _samples, ...rest } = profile;
  return JSON.stringify(rest);
}

export function profileRow(profile: Profile): Row {
  const { model, engine, dataset, workload, correctness, metrics } = profile;
  const wallNs = profile.sessions.reduce((sum, session) => sum + session.wall_ns, 0);
  return {
    profile_id: profile.profile_id,
    run_id: profile.run_id,
    cell_key: profile.cell_key,
    created_at: profile.created_at,
    status: profile.status,
    error: profile.error,
    error_detail: profile.error_detail,
    system_id: systemId(profile.system),
    model_name: profile.model_name,
    model_sha256: model?.sha256 ?? null,
    model_family: model?.family ?? null,
    model_framework: model?.framework ?? null,
    model_weights: model?.weights ?? null,
    model_path: model?.path ?? null,
    engine_name: engine.name,
    engine_label: engine.label,
    engine_version: engine.version,
    engine_device: engine.device,
    engine_options: JSON.stringify(engine.options),
    engine_compile_ms: engine.compile_ms,
    engine_facts: JSON.stringify(engine.facts),
    engine_process: engine.process,
    precision_requested: engine.precision?.requested ?? null,
    precision_executed: engine.precision?.executed ?? null,
    precision_evidence: engine.precision?.evidence ?? null,
    headline_boundary: profile.headline_boundary,
    validity: profile.scenario?.validity ?? null,
    validity_reasons: profile.scenario ? JSON.stringify(profile.scenario.reasons) : null,
    mlperf_validity: profile.verdicts?.mlperf_validity ?? null,
    noisy: profile.verdicts?.noisy ?? null,
    short_session_ms: profile.verdicts?.short_session_ms ?? null,
    ci_half_width: profile.verdicts?.ci_half_width ?? null,
    busy: profile.verdicts?.busy ?? null,
    rounds_seed: profile.rounds?.seed ?? null,
    stopped_by: profile.rounds?.stopped ?? null,
    level_shifts: profile.rounds?.level_shifts?.length ?? null,
    lead_claim: profile.rounds?.lead?.claim ?? null,
    scenario_metric: profile.scenario?.reported.name ?? null,
    scenario_value: profile.scenario?.reported.value ?? null,
    dataset_name: dataset.name,
    dataset_kind: dataset.kind,
    dataset_manifest_sha256: dataset.manifest_sha256,
    dataset_samples: dataset.samples,
    dataset_preprocess: JSON.stringify(dataset.preprocess),
    batch_size: workload.batch_size,
    warmup_batches: workload.warmup_batches,
    session_count: workload.sessions,
    samples_per_session: workload.samples_per_session,
    threads: workload.threads,
    scenario: workload.scenario,
    seed: workload.seed,
    correctness_reference_engine: correctness?.reference_engine ?? null,
    correctness_max_abs_error: correctness?.max_abs_error ?? null,
    correctness_max_rel_error: correctness?.max_rel_error ?? null,
    correctness_atol: correctness?.atol ?? null,
    correctness_rtol: correctness?.rtol ?? null,
    correctness_passed: correctness?.passed ?? null,
    ...throughputCells(profile.throughput),
    ...latencyCells(profile.latency),
    peak_rss_mb: metrics[STORED_METRIC_NAMES.peak_rss_mb] ?? null,
    peak_device_mb: metrics[STORED_METRIC_NAMES.peak_device_mb] ?? null,
    cpu_time_ms: metrics[STORED_METRIC_NAMES.cpu_time_ms] ?? null,
    achieved_flops: profile.achieved_flops,
    peak_fraction: profile.peak_fraction,
    top1: scoreValue(profile, STORED_SCORE_NAMES.top1),
    top5: scoreValue(profile, STORED_SCORE_NAMES.top5),
    measured_wall_s: profile.sessions.length === 0 ? null : wallNs / 1e9,
    energy_j_per_sample: profile.energy?.joules_per_sample ?? null,
    energy_mean_w: profile.energy?.mean_watts ?? null,
    energy_method: profile.energy?.method ?? null,
    energy_reason: profile.energy?.reason ?? null,
    latency_json: JSON.stringify(profile.latency),
    metrics_json: JSON.stringify(metrics),
    config_json: JSON.stringify(profile.config),
    command: profile.command,
    profile_json: profileJsonWithoutSamples(profile),
  };
}

export function sessionRow(profileId: string, session: SessionResult): Row {
  return {
    profile_id: profileId,
    session_index: session.index,
    batches: session.batches,
    samples: session.samples,
    wall_ns: session.wall_ns,
    throughput_sps: session.throughput_sps,
    ...latencyCells(session.latency),
    latency_json: JSON.stringify(session.latency),
    metrics_json: JSON.stringify(session.metrics),
  };
}

/** The Profile's paired-round ratios against the other contenders of its group, one row each. */
export function pairRatioRows(profile: Profile): Row[] {
  return (profile.rounds?.pairs ?? []).map((pair) => ({ profile_id: profile.profile_id, ...pair }));
}
