import { scoreKind } from './accuracy.js';
import { currentProfiles, paretoFront, speedupMatrices, byDataset } from './comparisons.js';
import { toCsv, toJson, type DataTable } from './csv.js';
import { scrubCommand } from './scrub.js';
import type { ProfileEntry, SiteData } from './data.js';
import { buildHistory, type HistorySeries } from './history.js';
import { siteSeries } from './site-series.js';
import { sparsityPoints } from './sparsity.js';

/** One downloadable file: its path under data/ and how to write it (a path ending in .gz is written gzip-compressed). */
export interface DataFile {
  path: string;
  render: () => string;
}

/**
 * The leaderboard view's names: p50_ms and p99_ms are at latency_boundary, the headline; engine_entry is the label,
 * else the engine; validity_reasons is a JSON array (one CSV cell).
 */
const PROFILE_COLUMNS = [
  'profile_id', 'created_at', 'run_id', 'status', 'error', 'model', 'engine', 'engine_entry', 'engine_version', 'device', 'precision',
  'precision_requested', 'batch_size', 'scenario', 'validity', 'validity_reasons', 'scenario_metric', 'scenario_value', 'hardware',
  'dataset', 'rank_in_group', 'throughput_sps', 'throughput_std_sps', 'latency_boundary', 'p50_ms', 'p99_ms', 'engine_p50_ms',
  'engine_p99_ms', 'predict_p50_ms', 'predict_p99_ms', 'transport_p50_ms', 'model_only_p50_ms', 'query_p50_ms', 'query_p99_ms',
  'accuracy', 'accuracy_metric', 'peak_rss_mb', 'peak_device_mb', 'achieved_flops', 'peak_fraction', 'command',
];

export function profileRecord(p: ProfileEntry): Record<string, unknown> {
  return {
    profile_id: p.profile_id,
    created_at: p.created_at,
    run_id: p.run_id,
    status: p.status,
    error: p.error,
    model: p.model_name,
    engine: p.engine_name,
    engine_entry: p.engine_entry,
    engine_version: p.engine_version,
    device: p.engine_device,
    precision: p.precision,
    precision_requested: p.precision_requested,
    batch_size: p.batch_size,
    scenario: p.scenario,
    validity: p.validity,
    validity_reasons: p.validity_reasons,
    scenario_metric: p.scenario_metric,
    scenario_value: p.scenario_value,
    hardware: p.hardware,
    dataset: p.dataset_name,
    rank_in_group: p.rank_in_group,
    throughput_sps: p.throughput_mean,
    throughput_std_sps: p.throughput_std,
    latency_boundary: p.latency_boundary,
    p50_ms: p.p50_ms,
    p99_ms: p.p99_ms,
    engine_p50_ms: p.engine_p50_ms,
    engine_p99_ms: p.engine_p99_ms,
    predict_p50_ms: p.predict_p50_ms,
    predict_p99_ms: p.predict_p99_ms,
    transport_p50_ms: p.transport_p50_ms,
    model_only_p50_ms: p.model_only_p50_ms,
    query_p50_ms: p.query_p50_ms,
    query_p99_ms: p.query_p99_ms,
    accuracy: p.accuracy,
    accuracy_metric: p.accuracyMetric,
    peak_rss_mb: p.peak_rss_mb,
    peak_device_mb: p.peak_device_mb,
    achieved_flops: p.achieved_flops,
    peak_fraction: p.peak_fraction,
    // As the pages show it: a path that climbs out of the folder pbh ran in names this machine's folders.
    command: scrubCommand(p.command),
  };
}

export function profilesTable(profiles: ProfileEntry[]): DataTable {
  return { columns: PROFILE_COLUMNS, rows: profiles.map(profileRecord) };
}

function bestThroughput(profiles: ProfileEntry[]): number | null {
  const values = profiles.map((p) => p.throughput_mean).filter((v): v is number => v !== null);
  return values.length === 0 ? null : Math.max(...values);
}

function groupSummary(groups: SiteData['models']): DataTable {
  return {
    columns: ['name', 'profiles', 'ok', 'not_ok', 'best_throughput_sps', 'latest'],
    rows: groups.map((g) => ({
      name: g.name,
      profiles: g.profiles.length,
      ok: g.profiles.filter((p) => p.status === 'ok').length,
      not_ok: g.profiles.filter((p) => p.status !== 'ok').length,
      best_throughput_sps: bestThroughput(g.profiles),
      latest: g.profiles.reduce((latest, p) => (p.created_at > latest ? p.created_at : latest), ''),
    })),
  };
}

function historyTable(series: readonly HistorySeries[]): DataTable {
  return {
    columns: ['series', 'model', 'engine', 'engine_entry', 'precision', 'scenario', 'device', 'batch_size', 'hardware', 'created_at', 'profile_id', 'run_id', 'status', 'throughput_sps', 'throughput_std_sps', 'sessions', 'change', 'welch_t', 'welch_df', 'welch_p', 'detectable_change', 'status_change', 'flagged'],
    rows: series.flatMap((s) =>
      s.points.map((pt) => ({
        series: s.key,
        model: s.model,
        engine: s.engine,
        engine_entry: s.entry,
        precision: pt.profile.precision,
        scenario: s.scenario,
        device: s.device,
        batch_size: s.batchSize,
        hardware: s.hardware,
        created_at: pt.profile.created_at,
        profile_id: pt.profile.profile_id,
        run_id: pt.profile.run_id,
        status: pt.profile.status,
        throughput_sps: pt.mean,
        throughput_std_sps: pt.std,
        sessions: pt.sessions.length,
        change: pt.change?.relative ?? null,
        welch_t: pt.change?.t ?? null,
        welch_df: pt.change?.df ?? null,
        welch_p: pt.change?.p ?? null,
        detectable_change: pt.change?.detectable?.threshold ?? null,
        status_change: pt.change?.status ? `${pt.change.status.from} -> ${pt.change.status.to}` : null,
        flagged: pt.change?.flagged ?? false,
      })),
    ),
  };
}

export function comparisonTables(profiles: ProfileEntry[]): Record<'speedup' | 'sparsity' | 'batch' | 'pareto', DataTable> {
  const current = currentProfiles(profiles);
  const series = siteSeries(profiles).name;
  const speedup = speedupMatrices(current).flatMap((m) =>
    m.engines.flatMap((row) =>
      m.engines.map((col) => ({
        model: m.model, scenario: m.scenario, device: m.device, batch_size: m.batchSize, hardware: m.hardware, engine: row.name, precision: row.profile.precision,
        versus: col.name, versus_precision: col.profile.precision,
        throughput_sps: row.throughput, versus_throughput_sps: col.throughput, speedup: row.throughput / col.throughput,
      })),
    ),
  );
  const pareto = [...byDataset(current).entries()].flatMap(([group, all]) => {
    // As the chart: accuracy only, a random-weight model's agreement is not on the trade-off.
    const members = all.filter((p) => scoreKind(p) === 'accuracy');
    const front = new Set(paretoFront(members));
    return members
      .filter((p) => p.accuracy !== null)
      .map((p) => ({ group, ...profileRecord(p), on_pareto_front: front.has(p) }));
  });
  return {
    speedup: {
      columns: ['model', 'scenario', 'device', 'batch_size', 'hardware', 'engine', 'precision', 'versus', 'versus_precision', 'throughput_sps', 'versus_throughput_sps', 'speedup'],
      rows: speedup,
    },
    sparsity: {
      columns: ['dataset', 'model', 'base_model', 'sparsity', 'sparsity_kind', 'pattern', 'method', 'sparsity_target', 'engine', 'engine_entry', 'precision', 'scenario', 'device', 'batch_size', 'hardware', 'throughput_sps', 'relative_throughput', 'accuracy', 'relative_accuracy', 'accuracy_metric', 'samples_scored', 'profile_id'],
      // The Sparsity study's points: each with its dense base model and the ratios to that model's Profile in the same cell.
      rows: [...byDataset(current).values()].flatMap((members) => sparsityPoints(members, series)).map((pt) => {
        const p = pt.profile;
        return {
          dataset: p.dataset_name, model: p.model_name, base_model: pt.base, sparsity: pt.actual, sparsity_kind: p.sparsity_kind, pattern: pt.kind, method: pt.method,
          sparsity_target: pt.target, engine: p.engine_name, engine_entry: p.engine_entry, precision: p.precision, scenario: p.scenario, device: p.engine_device,
          batch_size: p.batch_size, hardware: p.hardware, throughput_sps: p.throughput_mean, relative_throughput: pt.relThroughput, accuracy: p.accuracy,
          relative_accuracy: pt.relAccuracy, accuracy_metric: p.accuracyMetric, samples_scored: pt.samplesScored, profile_id: p.profile_id,
        };
      }),
    },
    batch: {
      columns: ['model', 'engine', 'engine_entry', 'precision', 'scenario', 'device', 'hardware', 'batch_size', 'latency_boundary', 'p50_ms', 'p99_ms', 'throughput_sps', 'profile_id'],
      rows: current.map((p) => ({
        model: p.model_name, engine: p.engine_name, engine_entry: p.engine_entry, precision: p.precision, scenario: p.scenario, device: p.engine_device, hardware: p.hardware, batch_size: p.batch_size,
        latency_boundary: p.latency_boundary, p50_ms: p.p50_ms, p99_ms: p.p99_ms, throughput_sps: p.throughput_mean, profile_id: p.profile_id,
      })),
    },
    pareto: { columns: ['group', ...PROFILE_COLUMNS, 'on_pareto_front'], rows: pareto },
  };
}

/**
 * A page's table as CSV and as JSON, both gzip-compressed: pandas, DuckDB, R and Python's gzip read .csv.gz and
 * .json.gz as they are. Plain, the leaderboard's and History's tables were 28 MB at 10,000 Profiles, a tenth of the site.
 */
function both(path: string, table: () => DataTable): DataFile[] {
  return [
    { path: `${path}.csv.gz`, render: () => toCsv(table()) },
    { path: `${path}.json.gz`, render: () => toJson(table()) },
  ];
}

/**
 * A page's slice of a larger table (one model's, one engine's, one History series' rows): CSV only, since the whole
 * table's JSON (leaderboard.json.gz, history.json.gz) has every row already.
 */
function slice(path: string, table: () => DataTable): DataFile[] {
  return [{ path: `${path}.csv.gz`, render: () => toCsv(table()) }];
}

/** Every file under data/ except the Parquet export and each Profile's own (lib/profile-page/files.ts). */
export function dataFiles(data: SiteData): DataFile[] {
  const history = buildHistory(data.profiles);
  let comparisons: ReturnType<typeof comparisonTables> | undefined;
  const compare = (): ReturnType<typeof comparisonTables> => (comparisons ??= comparisonTables(data.profiles));
  return [
    ...both('leaderboard', () => profilesTable(data.profiles)),
    ...both('models', () => groupSummary(data.models)),
    ...both('engines', () => groupSummary(data.engines)),
    ...data.models.flatMap((g) => slice(`models/${g.slug}`, () => profilesTable(g.profiles))),
    ...data.engines.flatMap((g) => slice(`engines/${g.slug}`, () => profilesTable(g.profiles))),
    ...(['speedup', 'sparsity', 'batch', 'pareto'] as const).flatMap((name) => both(`comparisons-${name}`, () => compare()[name])),
    ...both('history', () => historyTable(history)),
    ...history.flatMap((s) => slice(`history/${s.slug}`, () => historyTable([s]))),
    ...both('runs', () => ({ columns: ['run_id', 'name', 'started_at', 'finished_at', 'profiles', 'command'], rows: data.runs.map((r) => ({ ...r, command: scrubCommand(r.command) })) })),
  ];
}
