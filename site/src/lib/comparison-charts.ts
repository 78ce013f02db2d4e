import * as Plot from '@observablehq/plot';
import { batchLabel } from '../charts/palette.js';
import { paddedScale, tickText, timeAxis, type AxisScale } from '../charts/axes.js';
import { heightForLabels, spreadLabels } from '../charts/direct-labels.js';
import { ink } from '../charts/palette.js';
import { renderChart } from '../charts/render.js';
import { scoreKind } from './accuracy.js';
import { paretoFront } from './comparisons.js';
import type { ProfileEntry } from './data.js';
import { fmtNum, fmtPct } from './format.js';
import { latencyHeading } from './labels.js';
import { noiseOf } from './noise.js';
import type { SiteSeries } from './site-series.js';

export interface ChartView {
  /** Plot's figure as markup: legends and the SVG. */
  svg: string;
  table: { columns: string[]; rows: string[][] };
}

/** Headline latencies as charts read them: one boundary named on the axis, or each value naming its own where they mix. */
function headlineLatency(profiles: ProfileEntry[]): { label: string; text: (ms: number | null, p: ProfileEntry) => string } {
  const heading = latencyHeading(profiles);
  return {
    label: heading.label,
    text: (ms, p) => (heading.mixed && ms !== null ? `${fmtNum(ms)} (${p.latency_boundary})` : fmtNum(ms)),
  };
}

/** "noisy (why)" for a Profile the noisy rule marks, else empty: in every chart's tooltip and data table. */
export function noisyText(p: ProfileEntry): string {
  const noise = noiseOf(p);
  return noise.noisy ? `noisy (${noise.brief})` : '';
}

const withNoise = (tip: string, p: ProfileEntry): string => (noisyText(p) ? `${tip}; ${noisyText(p)}` : tip);

const sortedByBatch = (list: ProfileEntry[], name: (p: ProfileEntry) => string): ProfileEntry[] =>
  [...list].sort((a, b) => name(a).localeCompare(name(b)) || a.batch_size - b.batch_size);

/** Margins every comparison chart fixes: direct labels are placed in pixels, so the plot's rows must be known. */
export const MARGINS = { marginTop: 26, marginRight: 110, marginBottom: 40, marginLeft: 64 };

/** Each series' point at its largest x, with its label's y spread from the others' (direct-labels.ts). */
function endLabels<T extends { name: string; x: number; y: number }>(points: readonly T[], y: AxisScale, height: number): (T & { labelY: number })[] {
  const ends = new Map<string, T>();
  for (const p of points) if (!ends.has(p.name) || p.x >= ends.get(p.name)!.x) ends.set(p.name, p);
  const list = [...ends.values()];
  const spread = spreadLabels(list.map((p) => p.y), y, [height - MARGINS.marginBottom, MARGINS.marginTop]);
  return list.map((p, i) => ({ ...p, labelY: spread[i]! }));
}

/** Batch sizes as a log x scale padded past both ends (one batch size: a point scale of one). */
function batchScale(batches: readonly number[]): Plot.ScaleOptions {
  if (batches.length < 2) return { type: 'point', domain: batches, tickFormat: (v: number) => String(v) };
  return { type: 'log', domain: [Math.min(...batches) / 1.5, Math.max(...batches) * 1.5], ticks: [...batches], tickFormat: (v: number) => String(v) };
}

/** Headline latency against batch size, one line per engine series. */
export function batchLatencyChart(profiles: ProfileEntry[], ctx: SiteSeries, id: string, title: string): ChartView | null {
  const rows = sortedByBatch(profiles.filter((p) => p.p50_ms !== null), ctx.name);
  if (rows.length === 0) return null;
  const latency = headlineLatency(rows);
  const batches = [...new Set(rows.map((p) => p.batch_size))].sort((a, b) => a - b);
  const unit = timeAxis(rows.map((p) => p.p50_ms ?? NaN));
  const points = rows.map((p) => ({ p, name: ctx.name(p), x: p.batch_size, y: (p.p50_ms ?? NaN) * unit.fromMs }));
  const y = paddedScale(points.map((d) => d.y));
  const height = heightForLabels(new Set(points.map((d) => d.name)).size, MARGINS.marginTop, MARGINS.marginBottom, 280);
  const ends = endLabels(points, y, height);
  const tip = (p: ProfileEntry): string => withNoise(`${ctx.name(p)}, ${batchLabel(p.batch_size)}: p50 ${latency.text(p.p50_ms, p)} ms, p99 ${latency.text(p.p99_ms, p)} ms`, p);
  const colour = (d: { name: string }): string => ctx.palette.color(d.name);
  return {
    svg: renderChart({
      id,
      title,
      rows: rows.length,
      description: `Median latency per batch (${unit.unit}, ${latency.label} boundary) against batch size. ${rows.map(tip).join('; ')}.`,
      plot: {
        height,
        ...MARGINS,
        x: { label: `Batch size${batches.length > 1 ? ' (log scale)' : ''} →`, ...batchScale(batches) },
        y: { label: `↑ p50 latency per batch (${unit.unit}, ${latency.label}${y.type === 'log' ? ', log scale' : ''})`, ...y, grid: true },
        color: ctx.palette.colorScale(rows.map(ctx.name)),
        marks: [
          Plot.line(points, { x: 'x', y: 'y', stroke: 'name', z: 'name', strokeWidth: 1.6 }),
          Plot.dot(points, { x: 'x', y: 'y', stroke: 'name', fill: 'name', r: 3.5, title: (d: { p: ProfileEntry }) => tip(d.p) }),
          Plot.text(ends, { x: 'x', y: 'labelY', text: 'name', fill: { value: (d: { name: string }) => ink(colour(d)), scale: null }, dx: 7, textAnchor: 'start', fontSize: 11 }),
        ],
      },
    }),
    table: {
      columns: ['Engine', 'Batch size', `p50 ms (${latency.label})`, `p99 ms (${latency.label})`, 'Throughput (samples/s)', 'Noisy'],
      rows: rows.map((p) => [ctx.name(p), String(p.batch_size), latency.text(p.p50_ms, p), latency.text(p.p99_ms, p), fmtNum(p.throughput_mean), noisyText(p)]),
    },
  };
}

/** Throughput against headline latency, each point a batch size (its symbol): the trade-off batching buys. */
export function tradeoffChart(profiles: ProfileEntry[], ctx: SiteSeries, id: string, title: string): ChartView | null {
  const rows = sortedByBatch(profiles.filter((p) => p.p50_ms !== null && p.throughput_mean !== null), ctx.name);
  if (rows.length === 0) return null;
  const latency = headlineLatency(rows);
  const unit = timeAxis(rows.map((p) => p.p50_ms ?? NaN));
  const points = rows.map((p) => ({ p, name: ctx.name(p), symbol: batchLabel(p.batch_size), x: (p.p50_ms ?? NaN) * unit.fromMs, y: p.throughput_mean ?? NaN }));
  const x = paddedScale(points.map((d) => d.x));
  const y = paddedScale(points.map((d) => d.y));
  const height = heightForLabels(new Set(points.map((d) => d.name)).size, MARGINS.marginTop, MARGINS.marginBottom, 280);
  const ends = endLabels(points, y, height);
  const tip = (p: ProfileEntry): string => withNoise(`${ctx.name(p)}, ${batchLabel(p.batch_size)}: ${latency.text(p.p50_ms, p)} ms, ${fmtNum(p.throughput_mean)} samples/s`, p);
  return {
    svg: renderChart({
      id,
      title,
      rows: rows.length,
      description: `Throughput (samples/s) against median latency per batch (${unit.unit}, ${latency.label} boundary), one point per batch size. ${rows.map(tip).join('; ')}.`,
      plot: {
        height,
        ...MARGINS,
        x: { label: `p50 latency per batch (${unit.unit}, ${latency.label}${x.type === 'log' ? ', log scale' : ''}) →`, ...x },
        y: { label: `↑ Throughput (samples/s${y.type === 'log' ? ', log scale' : ''})`, ...y, grid: true },
        color: ctx.palette.colorScale(rows.map(ctx.name)),
        symbol: ctx.palette.symbolScale(rows.map((p) => p.batch_size)),
        marks: [
          Plot.line(points, { x: 'x', y: 'y', stroke: 'name', z: 'name', strokeWidth: 1.2, strokeOpacity: 0.6 }),
          Plot.dot(points, { x: 'x', y: 'y', stroke: 'name', symbol: 'symbol', r: 4, strokeWidth: 1.6, title: (d: { p: ProfileEntry }) => tip(d.p) }),
          Plot.text(ends, { x: 'x', y: 'labelY', text: 'name', fill: { value: (d: { name: string }) => ink(ctx.palette.color(d.name)), scale: null }, dx: 8, textAnchor: 'start', fontSize: 11 }),
        ],
      },
    }),
    table: {
      columns: ['Engine', 'Batch size', `p50 ms (${latency.label})`, 'Throughput (samples/s)', 'Noisy'],
      rows: rows.map((p) => [ctx.name(p), String(p.batch_size), latency.text(p.p50_ms, p), fmtNum(p.throughput_mean), noisyText(p)]),
    },
  };
}

/** Every scored Profile as a point (colour: engine, symbol: batch size), and the accuracy-vs-throughput Pareto front. */
export function paretoChart(profiles: ProfileEntry[], ctx: SiteSeries, id: string, title: string): (ChartView & { front: ProfileEntry[] }) | null {
  // Accuracy only: a random-weight model's agreement with the reference is not a point on this trade-off.
  const scored = profiles.filter((p) => p.accuracy !== null && p.throughput_mean !== null && scoreKind(p) === 'accuracy');
  if (scored.length === 0) return null;
  const front = paretoFront(scored);
  const tip = (p: ProfileEntry): string => withNoise(`${p.model_name} on ${ctx.name(p)}, ${batchLabel(p.batch_size)}: ${fmtNum(p.throughput_mean)} samples/s, ${fmtPct(p.accuracy)}`, p);
  const x = paddedScale(scored.map((p) => p.throughput_mean ?? NaN));
  // Accuracy as a percentage, padded both ways (never past 0 or 100): a point at 100% sits inside the frame.
  const acc = scored.map((p) => (p.accuracy ?? 0) * 100);
  const span = Math.max(1, Math.max(...acc) - Math.min(...acc));
  const y: AxisScale = { type: 'linear', domain: [Math.max(0, Math.min(...acc) - span * 0.15), Math.min(100, Math.max(...acc)) + span * 0.15], nice: true, tickFormat: tickText };
  const height = heightForLabels(front.length, MARGINS.marginTop, MARGINS.marginBottom, 300);
  const points = scored.map((p) => ({ p, name: ctx.name(p), symbol: batchLabel(p.batch_size), x: p.throughput_mean ?? NaN, y: (p.accuracy ?? 0) * 100 }));
  const frontPoints = front.map((f) => points.find((d) => d.p === f)!);
  const labelY = spreadLabels(frontPoints.map((d) => d.y), y, [height - MARGINS.marginBottom, MARGINS.marginTop]);
  const labels = frontPoints.map((d, i) => ({ ...d, labelY: labelY[i]!, text: d.p.model_name }));
  return {
    svg: renderChart({
      id,
      title,
      rows: scored.length,
      description:
        `Accuracy against throughput for ${scored.length} Profiles. The Pareto front (no Profile is both faster and more accurate) is: ` +
        `${front.map(tip).join('; ')}.`,
      plot: {
        height,
        ...MARGINS,
        x: { label: `Throughput (samples/s${x.type === 'log' ? ', log scale' : ''}) →`, ...x },
        y: { label: '↑ Accuracy (%)', ...y, grid: true },
        color: ctx.palette.colorScale(scored.map(ctx.name)),
        symbol: ctx.palette.symbolScale(scored.map((p) => p.batch_size)),
        marks: [
          Plot.line(frontPoints, { x: 'x', y: 'y', stroke: '#1d1d1f', strokeDasharray: '4,3' }),
          Plot.dot(points, { x: 'x', y: 'y', stroke: 'name', symbol: 'symbol', r: 4, strokeWidth: 1.6, title: (d: { p: ProfileEntry }) => tip(d.p) }),
          // The front's labels, spread apart in y, to the right of their point (the right margin holds them).
          Plot.text(labels, { x: 'x', y: 'labelY', text: 'text', dx: 8, textAnchor: 'start', fill: '#444', fontSize: 11 }),
        ],
      },
    }),
    table: {
      columns: ['Model', 'Engine', 'Batch', 'Throughput (samples/s)', 'Accuracy', 'On the front', 'Noisy'],
      rows: scored.map((p) => [p.model_name, ctx.name(p), String(p.batch_size), fmtNum(p.throughput_mean), fmtPct(p.accuracy), front.includes(p) ? 'yes' : '', noisyText(p)]),
    },
    front,
  };
}
