import * as Plot from '@observablehq/plot';
import { renderChart } from '../charts/render.js';
import { batchLabel, ink, type Palette } from '../charts/palette.js';
import { noisyText, type ChartView } from './comparison-charts.js';
import { fmtNum, fmtPct } from './format.js';
import type { SparsityPoint } from './sparsity.js';

/**
 * The sparsity figures (comparisons page and the Sparsity study page): small multiples per dense base model, x the
 * measured weight sparsity. Unstructured variants are lines from the dense model (solid OBC, dashed magnitude); each
 * N:M variant is a hollow point labelled with its pattern, never joined to another kind or another model.
 */

interface Row {
  pt: SparsityPoint;
  x: number;
  y: number;
  base: string;
  series: string;
  batch: string;
  line: string;
  /** Drawn dashed: a magnitude-pruned line (its dense anchor included). */
  dash: boolean;
  label: string;
}

/** A ratio is as noisy as either of its Profiles. */
const noisy = (pt: SparsityPoint): string => {
  const own = noisyText(pt.profile);
  const dense = pt.dense && pt.dense !== pt.profile ? noisyText(pt.dense) : '';
  return own ? `; ${own}` : dense ? `; dense ${dense}` : '';
};

const METHOD_COLORS: Record<string, string> = { dense: '#1d1d1f', obc: '#4269d0', magnitude: '#ff725c' };

function facets(bases: string[]): { channel: 'fx' | 'fy'; width: number; height: number } {
  return bases.length <= 3
    ? { channel: 'fx', width: Math.max(560, 360 * bases.length), height: 340 }
    : { channel: 'fy', width: 680, height: 60 + 200 * bases.length };
}

/** Line rows: each unstructured variant with its cell's dense point as the anchor at x = 0. */
function lineRows(rows: Row[], key: (r: Row) => string, denseRow: (r: Row) => Row | null): Row[] {
  const out = new Map<string, Row[]>();
  for (const r of rows) {
    if (r.pt.kind !== 'unstructured') continue;
    const line = key(r);
    const list = out.get(line) ?? [];
    const anchor = denseRow(r);
    const dash = r.pt.method === 'magnitude';
    if (list.length === 0 && anchor) list.push({ ...anchor, line, dash });
    list.push({ ...r, line, dash });
    out.set(line, list);
  }
  return [...out.values()].flatMap((list) => list.sort((a, b) => a.x - b.x));
}

/** Line ends closer than this, px, share one label: 11 px text and a gap. */
const END_GAP_PX = 14;

/**
 * One label per line end, where ends that would print within END_GAP_PX of each other (same facet, same x) share one
 * label naming them all: four engines ending at 80% used to overprint. The pixel distance is estimated from every
 * plotted value's extent (`ys`) over the plot's height (log or linear, as the axis is), as Plot's own domain spans them.
 */
function endLabels(lines: Row[], ys: readonly number[], log: boolean, plotHeight: number, color: (series: string) => string): { x: number; y: number; base: string; text: string; fill: string }[] {
  const ends = new Map<string, Row>();
  for (const r of lines) ends.set(r.line, r);
  const scale = (v: number): number => (log ? Math.log(v) : v);
  const span = scale(Math.max(...ys)) - scale(Math.min(...ys)) || 1;
  const px = (v: number): number => (scale(v) / span) * plotHeight;
  const name = (r: Row): string => `${r.series} ${r.batch.replace('batch ', 'b')}${r.dash ? ' (mag.)' : ''}`;
  const groups = new Map<string, Row[]>();
  for (const r of ends.values()) groups.set(`${r.base}\u0000${r.x}`, [...(groups.get(`${r.base}\u0000${r.x}`) ?? []), r]);
  return [...groups.values()].flatMap((group) => {
    const sorted = [...group].sort((a, b) => px(b.y) - px(a.y));
    const clusters: Row[][] = [];
    for (const r of sorted) {
      const last = clusters.at(-1);
      if (last && px(last[0]!.y) - px(r.y) < END_GAP_PX * last.length) last.push(r);
      else clusters.push([r]);
    }
    return clusters.map((c) => ({ x: c[0]!.x, y: c[0]!.y, base: c[0]!.base, text: c.map(name).join(', '), fill: c.length === 1 ? ink(color(c[0]!.series)) : '#444' }));
  });
}

const yMeaning = { throughput: 'Throughput (samples/s)', relThroughput: 'Throughput relative to dense (×)', relAccuracy: 'Accuracy relative to dense (×)' };

/** Throughput (absolute or relative to dense) against sparsity: colour per engine series, symbol per batch size. */
export function sparsitySpeedChart(
  points: SparsityPoint[],
  metric: 'throughput' | 'relThroughput' | 'relAccuracy',
  series: (pt: SparsityPoint) => string,
  palette: Palette,
  id: string,
  title: string,
): ChartView | null {
  const rows: Row[] = points
    .map((pt) => ({ pt, value: pt[metric] }))
    .filter((r): r is { pt: SparsityPoint; value: number } => r.value !== null && Number.isFinite(r.value))
    .map(({ pt, value }) => ({
      pt, x: pt.actual, y: value, base: pt.base, series: series(pt), batch: batchLabel(pt.profile.batch_size), line: '', dash: false,
      label: `${pt.profile.model_name} (${pt.kind}${pt.kind === 'dense' ? '' : `, ${pt.method}`}) on ${series(pt)}, ${batchLabel(pt.profile.batch_size)}: ${fmtPct(pt.actual)} sparse, ${metric === 'throughput' ? `${fmtNum(value)} samples/s` : `${value.toFixed(3)}×`}${noisy(pt)}`,
    }));
  if (rows.length === 0 || new Set(rows.map((r) => r.pt.kind)).size < 2) return null;
  const cell = (r: Row): string => [r.base, r.series, r.batch, r.pt.profile.scenario, r.pt.profile.hardware].join('\u0000');
  const denseByCell = new Map(rows.filter((r) => r.pt.kind === 'dense').map((r) => [cell(r), r]));
  const lines = lineRows(rows, (r) => `${cell(r)}\u0000${r.pt.method}`, (r) => denseByCell.get(cell(r)) ?? null);
  const bases = [...new Set(rows.map((r) => r.base))].sort((a, b) => a.localeCompare(b));
  const f = facets(bases);
  const ys = rows.map((r) => r.y);
  // Ratios read best on a log axis once they spread (0.5× is as far from 1 as 2×).
  const log = Math.min(...ys) > 0 && Math.max(...ys) / Math.min(...ys) > (metric === 'throughput' ? 10 : 3);
  const fc = { [f.channel]: 'base' } as const;
  const ends = metric === 'relAccuracy' ? [] : endLabels(lines, ys, log, f.height / (f.channel === 'fy' ? bases.length : 1) - 70, palette.color);
  const nm = rows.filter((r) => r.pt.kind !== 'dense' && r.pt.kind !== 'unstructured');
  const lineMark = (dashed: boolean): Plot.Markish =>
    Plot.line(lines.filter((r) => r.dash === dashed), {
      x: 'x', y: 'y', z: 'line', stroke: 'series', strokeWidth: 1.6, ...(dashed ? { strokeDasharray: '5,3' } : {}), ...fc,
    });
  const svg = renderChart({
    id,
    title,
    rows: rows.length,
    description:
      `${yMeaning[metric]} against measured weight sparsity, per dense model (${bases.join(', ')}). ` +
      rows.map((r) => r.label).join('; ') + '.',
    plot: {
      width: f.width,
      height: f.height,
      // Room for the longest end label (11 px text), so none is cut at the chart's edge.
      marginRight: Math.max(70, 14 + Math.max(0, ...ends.map((e) => e.text.length)) * 6.6),
      marginLeft: 60,
      x: { label: 'Weight sparsity (% zeros, measured) →', percent: true, domain: [0, 100 * Math.max(0.8, ...rows.map((r) => r.x))] },
      y: {
        label: `${yMeaning[metric]}${log ? ', log scale' : ''}`, labelAnchor: 'center', type: log ? 'log' : 'linear', grid: true,
        ...(metric === 'throughput' && !log ? { zero: true } : {}),
        // Accuracy ratios span at least 0.95-1.05: a few samples' difference must not fill the chart.
        ...(metric === 'relAccuracy' && !log ? { domain: [Math.min(0.95, ...ys), Math.max(1.05, ...ys)] } : {}),
      },
      color: palette.colorScale(rows.map((r) => r.series)),
      symbol: palette.symbolScale(rows.map((r) => r.pt.profile.batch_size)),
      [f.channel]: { label: null },
      marks: [
        ...(metric === 'throughput' ? [] : [Plot.ruleY([1], { stroke: '#9498a0' })]),
        lineMark(false),
        lineMark(true),
        Plot.dot(rows.filter((r) => !nm.includes(r)), { x: 'x', y: 'y', stroke: 'series', fill: 'series', symbol: 'batch', r: 4, title: 'label', ...fc }),
        Plot.dot(nm, { x: 'x', y: 'y', stroke: 'series', fill: 'white', symbol: 'batch', r: 4, strokeWidth: 1.6, title: 'label', ...fc }),
        Plot.text(nm, { x: 'x', y: 'y', text: (r: Row) => r.pt.kind, dx: 7, textAnchor: 'start', fill: '#444', fontSize: 11, ...fc }),
        // Accuracy ratios of one model coincide across engines and batch sizes (the same answers): their end labels
        // would print over each other, so that chart names its lines by colour and symbol only.
        ...(metric === 'relAccuracy'
          ? []
          : [Plot.text(ends, { x: 'x', y: 'y', text: 'text', dx: 6, textAnchor: 'start', fill: { value: 'fill', scale: null }, fontSize: 11, ...fc })]),
      ],
    },
  });
  return {
    svg,
    table: {
      columns: ['Dense model', 'Model', 'Kind', 'Method', 'Sparsity', 'Engine', 'Batch', metric === 'throughput' ? 'Throughput (samples/s)' : yMeaning[metric], 'Noisy'],
      rows: rows.map((r) => [r.base, r.pt.profile.model_name, r.pt.kind, r.pt.method, fmtPct(r.x), r.series, String(r.pt.profile.batch_size), metric === 'throughput' ? fmtNum(r.y) : `${r.y.toFixed(3)}×`, noisy(r.pt).replace(/^; /, '')]),
    },
  };
}

/**
 * Accuracy's y domain, as fractions: at least ACCURACY_SPAN wide (ten percentage points), so that a point of accuracy
 * is a small step on the chart, not its whole height; inside 0-100%.
 */
const ACCURACY_SPAN = 0.1;
export function accuracyDomain(values: readonly number[]): [number, number] {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  if (hi - lo >= ACCURACY_SPAN) return [lo, hi];
  const top = Math.min(1, Math.max(hi, lo + ACCURACY_SPAN));
  return [Math.max(0, Math.min(lo, top - ACCURACY_SPAN)), top];
}

interface AccuracyRow {
  base: string;
  model: string;
  kind: string;
  method: string;
  x: number;
  y: number;
  scored: string;
  /** The engine series and batch sizes that measured exactly this accuracy: one point for all of them. */
  who: string;
  line: string;
}

/**
 * Accuracy against sparsity per pruning kind and method (OBC next to magnitude). Engines and batch sizes that scored the
 * same samples with the same result are one point (named together), so no series hides under an identical one; a batch
 * size that scored a different number of samples is its own series.
 */
export function sparsityAccuracyChart(points: SparsityPoint[], series: (pt: SparsityPoint) => string, id: string, title: string): ChartView | null {
  const merged = new Map<string, AccuracyRow & { members: string[] }>();
  for (const pt of points) {
    if (pt.accuracy === null) continue;
    const key = [pt.base, pt.profile.model_name, pt.samplesScored, pt.accuracy].join('\u0000');
    const row = merged.get(key) ?? {
      base: pt.base, model: pt.profile.model_name, kind: pt.kind, method: pt.method, x: pt.actual, y: pt.accuracy,
      scored: `${pt.samplesScored} samples scored`, who: '', line: '', members: [],
    };
    row.members.push(`${series(pt)} b${pt.profile.batch_size}`);
    merged.set(key, row);
  }
  const rows = [...merged.values()].map((r) => ({ ...r, who: [...new Set(r.members)].sort().join(', ') }));
  if (rows.length === 0 || new Set(rows.map((r) => r.kind)).size < 2) return null;
  const denseOf = new Map(rows.filter((r) => r.kind === 'dense').map((r) => [`${r.base}\u0000${r.scored}\u0000${r.who}`, r]));
  const lines: AccuracyRow[] = [];
  const grouped = new Map<string, AccuracyRow[]>();
  for (const r of rows.filter((row) => row.kind === 'unstructured')) {
    const line = [r.base, r.method, r.scored, r.who].join('\u0000');
    const list = grouped.get(line) ?? [];
    const anchor = denseOf.get(`${r.base}\u0000${r.scored}\u0000${r.who}`);
    if (list.length === 0 && anchor) list.push({ ...anchor, method: r.method, line });
    list.push({ ...r, line });
    grouped.set(line, list);
  }
  for (const list of grouped.values()) lines.push(...list.sort((a, b) => a.x - b.x));
  const bases = [...new Set(rows.map((r) => r.base))].sort((a, b) => a.localeCompare(b));
  const f = facets(bases);
  const fc = { [f.channel]: 'base' } as const;
  const methods = [...new Set(rows.map((r) => r.method))].sort();
  const scoredKinds = [...new Set(rows.map((r) => r.scored))].sort();
  const isNm = (r: AccuracyRow): boolean => r.kind !== 'dense' && r.kind !== 'unstructured';
  const tip = (r: AccuracyRow): string => `${r.model} (${r.kind}${r.kind === 'dense' ? '' : `, ${r.method}`}): ${fmtPct(r.x)} sparse, accuracy ${fmtPct(r.y)} over ${r.scored} (${r.who})`;
  const svg = renderChart({
    id,
    title,
    rows: rows.length,
    description: `Accuracy against measured weight sparsity, per dense model and pruning method. ${rows.map(tip).join('; ')}.`,
    plot: {
      width: f.width,
      height: f.height,
      marginRight: 60,
      marginLeft: 60,
      x: { label: 'Weight sparsity (% zeros, measured) →', percent: true, domain: [0, 100 * Math.max(0.8, ...rows.map((r) => r.x))] },
      y: { label: 'Accuracy (%)', labelAnchor: 'center', percent: true, grid: true, domain: accuracyDomain(rows.map((r) => r.y)).map((v) => v * 100) },
      color: { domain: methods, range: methods.map((m) => METHOD_COLORS[m] ?? '#9498a0'), legend: true, label: 'Method' },
      symbol: { domain: scoredKinds, legend: scoredKinds.length > 1, label: 'Scored' },
      [f.channel]: { label: null },
      marks: [
        Plot.line(lines.filter((r) => r.method !== 'magnitude'), { x: 'x', y: 'y', z: 'line', stroke: 'method', strokeWidth: 1.6, ...fc }),
        Plot.line(lines.filter((r) => r.method === 'magnitude'), { x: 'x', y: 'y', z: 'line', stroke: 'method', strokeWidth: 1.6, strokeDasharray: '5,3', ...fc }),
        Plot.dot(rows.filter((r) => !isNm(r)), { x: 'x', y: 'y', stroke: 'method', fill: 'method', symbol: 'scored', r: 4, title: tip, ...fc }),
        Plot.dot(rows.filter(isNm), { x: 'x', y: 'y', stroke: 'method', fill: 'white', symbol: 'scored', r: 4, strokeWidth: 1.6, title: tip, ...fc }),
        Plot.text(rows.filter(isNm), { x: 'x', y: 'y', text: (r: AccuracyRow) => `${r.kind} ${r.method}`, dx: 7, textAnchor: 'start', fill: 'method', fontSize: 11, ...fc }),
        Plot.text(lines, Plot.selectLast({ x: 'x', y: 'y', z: 'line', text: 'method', dx: 6, textAnchor: 'start', fill: 'method', fontSize: 11, ...fc })),
      ],
    },
  });
  return {
    svg,
    table: {
      columns: ['Dense model', 'Model', 'Kind', 'Method', 'Sparsity', 'Accuracy', 'Samples scored', 'Measured by'],
      rows: rows.map((r) => [r.base, r.model, r.kind, r.method, fmtPct(r.x), fmtPct(r.y), r.scored.replace(' samples scored', ''), r.who]),
    },
  };
}
