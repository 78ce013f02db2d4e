import { detectChanges, type Change, type ChangeDetection } from './changes.js';
import type { HistoryPoint } from './points.js';

/** One cell key on one machine, every status, oldest first: what `pbh history` finds change points in. */
export interface CellSeries {
  id: string;
  cell_key: string;
  hardware: string;
  /** model · entry · precision · scenario · device · batch: the cell in words. */
  label: string;
  points: HistoryPoint[];
}

/** Where a change happened and what it was, in words and figures, for the command's table and JSON. */
export interface ChangeRow {
  series: string;
  cell_key: string;
  hardware: string;
  kind: Change['kind'];
  /** faster / slower for a step; the status transition for a status change. */
  what: string;
  ratio: number | null;
  ci95_low: number | null;
  ci95_high: number | null;
  p: number | null;
  before_mean: number | null;
  after_mean: number | null;
  points_before: number | null;
  points_after: number | null;
  created_at: string;
  profile_id: string;
  run_id: string;
  run_name: string | null;
  git_sha: string | null;
  previous_git_sha: string | null;
  engine_version: string | null;
  previous_engine_version: string | null;
}

export function cellLabel(p: HistoryPoint): string {
  return [p.model_name, p.engine_entry, p.precision ?? 'precision unknown', p.scenario, p.device, `batch ${p.batch_size}`].join(' · ');
}

export function cellSeries(points: readonly HistoryPoint[]): CellSeries[] {
  const byKey = new Map<string, CellSeries>();
  for (const p of points) {
    const id = `${p.cell_key}\u0000${p.hardware}`;
    const known = byKey.get(id);
    if (known) known.points.push(p);
    else byKey.set(id, { id, cell_key: p.cell_key, hardware: p.hardware, label: cellLabel(p), points: [p] });
  }
  for (const s of byKey.values()) {
    // The label of a cell that ran: a failure before the precision was resolved says "precision unknown".
    const ran = s.points.find((p) => p.precision !== null);
    if (ran) s.label = cellLabel(ran);
  }
  return [...byKey.values()];
}

function rowOf(series: CellSeries, change: Change): ChangeRow {
  const at = series.points[change.index]!;
  const before = series.points[change.previous]!;
  const step = change.kind === 'throughput' ? change : null;
  return {
    series: series.label,
    cell_key: series.cell_key,
    hardware: series.hardware,
    kind: change.kind,
    what: change.kind === 'throughput' ? change.direction : `${change.from} → ${change.to}`,
    ratio: step?.ratio ?? null,
    ci95_low: step?.low ?? null,
    ci95_high: step?.high ?? null,
    p: step?.p ?? null,
    before_mean: step?.before.mean ?? null,
    after_mean: step?.after.mean ?? null,
    points_before: step?.before.points ?? null,
    points_after: step?.after.points ?? null,
    created_at: at.created_at,
    profile_id: at.profile_id,
    run_id: at.run_id,
    run_name: at.run_name,
    git_sha: at.git_sha,
    previous_git_sha: before.git_sha,
    engine_version: at.engine_version,
    previous_engine_version: before.engine_version,
  };
}

/** Every change point of every cell series, the latest first. */
export async function historyChanges(points: readonly HistoryPoint[]): Promise<{ method: string; series: number; rows: ChangeRow[] }> {
  const series = cellSeries(points);
  const detection: ChangeDetection = await detectChanges(
    series.map((s) => ({ id: s.id, points: s.points.map((p) => ({ status: p.status, throughput: p.throughput, sessions: p.sessions })) })),
  );
  const rows = series.flatMap((s) => (detection.series.get(s.id)?.changes ?? []).map((c) => rowOf(s, c)));
  rows.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.series.localeCompare(b.series));
  return { method: detection.method, series: series.length, rows };
}
