import { formatCsv, formatTable, type QueryCell, type QueryResult } from '../store/index.js';
import { terminalSafe } from '../text/terminal.js';
import type { ChangeRow } from '../history/series.js';
import type { CompareRow } from './compare.js';

export const REPORT_FORMATS = ['table', 'markdown', 'csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

const num = (x: number | null, digits = 3): string => (x === null ? '—' : x.toFixed(digits));
const sps = (x: number | null): string => (x === null ? '—' : Number(x.toPrecision(4)).toLocaleString('en-US'));
const pval = (x: number | null): string => (x === null ? '—' : x < 1e-4 ? x.toExponential(1) : x.toPrecision(2));
const interval = (low: number | null, high: number | null): string => (low === null || high === null ? '—' : `[${num(low)}, ${num(high)}]`);

function markdown(result: QueryResult): string {
  const cell = (c: QueryCell): string => String(c ?? '').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
  const numeric = result.columns.map((_, i) => result.rows.length > 0 && result.rows.every((r) => /^[-\d.,×[\] ]+$|^—$/.test(String(r[i] ?? ''))));
  return [
    `| ${result.columns.map(cell).join(' | ')} |`,
    `| ${numeric.map((n) => (n ? '---:' : '---')).join(' | ')} |`,
    ...result.rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** Text tables and Markdown show the words; CSV and JSON carry every field as data. */
function render(display: QueryResult, data: Record<string, unknown>[], format: ReportFormat): string {
  if (format === 'json') return JSON.stringify(data, null, 2);
  if (format === 'csv') {
    const columns = Object.keys(data[0] ?? {});
    const flat = (v: unknown): QueryCell => (v === null || v === undefined ? null : typeof v === 'object' ? JSON.stringify(v) : (v as QueryCell));
    return formatCsv({ columns, types: columns.map(() => 'VARCHAR'), rows: data.map((row) => columns.map((c) => flat(row[c]))) });
  }
  if (format === 'markdown') return markdown(display);
  return formatTable(display, { maxCellWidth: 90 });
}

export function compareReport(rows: readonly CompareRow[], format: ReportFormat): string {
  const display: QueryResult = {
    columns: ['cell', 'baseline (samples/s)', 'candidate (samples/s)', 'ratio', '95% CI', 'p', 'verdict', 'caveats', 'why'],
    types: [],
    rows: rows.map((r) => [
      r.cell,
      r.baseline?.status === 'ok' ? sps(r.baseline.throughput) : (r.baseline?.status ?? '—'),
      r.candidate?.status === 'ok' ? sps(r.candidate.throughput) : (r.candidate?.status ?? '—'),
      r.ratio === null ? '—' : `×${num(r.ratio)}`,
      interval(r.ci95_low, r.ci95_high),
      pval(r.p),
      r.caveats.length > 0 && r.verdict !== 'not comparable' ? `${r.verdict} (caveat)` : r.verdict,
      r.caveats.join('; ') || '—',
      r.why,
    ]),
  };
  display.types = display.columns.map(() => 'VARCHAR');
  return render(display, rows.map((r) => ({ ...r })), format);
}

export function historyReport(rows: readonly ChangeRow[], format: ReportFormat): string {
  const display: QueryResult = {
    columns: ['when', 'series', 'hardware', 'change', 'ratio', '95% CI', 'p', 'run', 'commit', 'engine'],
    types: [],
    rows: rows.map((r) => [
      r.created_at.replace('T', ' ').slice(0, 19),
      r.series,
      r.hardware,
      r.kind === 'status' ? `status ${r.what}` : `${r.what} (${r.points_before} → ${r.points_after} points)`,
      r.ratio === null ? '—' : `×${num(r.ratio)}`,
      interval(r.ci95_low, r.ci95_high),
      pval(r.p),
      `${r.run_id.slice(0, 8)}${r.run_name ? ` (${r.run_name})` : ''}`,
      r.git_sha === null ? '—' : r.previous_git_sha && r.previous_git_sha !== r.git_sha ? `${r.previous_git_sha.slice(0, 8)} → ${r.git_sha.slice(0, 8)}` : r.git_sha.slice(0, 8),
      r.engine_version === r.previous_engine_version ? (r.engine_version ?? '—') : `${r.previous_engine_version ?? '?'} → ${r.engine_version ?? '?'}`,
    ]),
  };
  display.types = display.columns.map(() => 'VARCHAR');
  return render(display, rows.map((r) => ({ ...r })), format);
}

/** Names and paths from databases are shown escaped, never sent to a terminal raw. */
export const safeLine = (text: string): string => terminalSafe(text, { keepNewlines: true });
