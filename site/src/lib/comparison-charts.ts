import * as Plot from '@observablehq/plot';
import { batchLabel } from '../charts/palette.js';
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

/** Log scale where the values span more than a factor of `spread` (throughput from TVM to onnxruntime, say). */
const spans = (values: number[], spread = 10): boolean => values.length > 1 && Math.min(...values) > 0 && Math.max(...values) / Math.min(...values) > spread;

/** "noisy (why)" for a Profile the noisy rule marks, else empty: in every chart's tooltip and data table. */
export function noisyText(p: ProfileEntry): string {
  const noise = noiseOf(p);
  return noise.noisy ? `noisy (${noise.brief})` : '';
}

const withNoise = (tip: string, p: ProfileEntry): string => (noisyText(p) ? `${tip}; ${noisyText(p)}` : tip);

const sortedByBatch = (list: ProfileEntry[], name: (p: ProfileEntry) => string): ProfileEntry[] =>
  [...list].sort((a, b) => name(a).localeCompare(name(b)) || a.batch_size - b.batch_size);

/** Headline latency against batch size, one line per engine series. */
export function batchLatencyChart(profiles: ProfileEntry[], ctx: SiteSeries, id: string, title: string): ChartView | null {
  const rows = sortedByBatch(profiles.filter((p) => p.p50_ms !== null), ctx.name);
  if (rows.length === 0) return null;
  const latency = headlineLatency(rows);
  const batches = [...new Set(rows.map((p) => p.batch_size))].sort((a, b) => a - b);
  const tip = (p: ProfileEntry): string => withNoise(`${ctx.name(p)}, ${batchLabel(p.batch_size)}: p50 ${latency.text(p.p50_ms, p)} ms, p99 ${latency.text(p.p99_ms, p)} ms`, p);
  return {
    svg: renderChart({
      id,
      title,
      rows: rows.length,
      description: `Median latency per batch (ms, ${latency.label} boundary) against batch size. ${rows.map(tip).join('; ')}.`,
      plot: {
        height: 280,
        marginRight: 90,
        x: { label: `Batch size${batches.length > 1 ? ' (log scale)' : ''} →`, type: batches.length > 1 ? 'log' : 'linear', ticks: batches, tickFormat: (v: number) => String(v) },
        y: { label: `↑ p50 latency per batch (ms, ${latency.label})`, type: spans(rows.map((p) => p.p50_ms ?? 0), 20) ? 'log' : 'linear', grid: true },
        color: ctx.palette.colorScale(rows.map(ctx.name)),
        marks: [
          Plot.line(rows, { x: 'batch_size', y: 'p50_ms', stroke: ctx.name, z: ctx.name, strokeWidth: 1.6 }),
          Plot.dot(rows, { x: 'batch_size', y: 'p50_ms', stroke: ctx.name, fill: ctx.name, r: 3.5, title: tip }),
          Plot.text(rows, Plot.selectLast({ x: 'batch_size', y: 'p50_ms', z: ctx.name, text: ctx.name, fill: ctx.name, dx: 6, textAnchor: 'start', fontSize: 9 })),
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
  const tip = (p: ProfileEntry): string => withNoise(`${ctx.name(p)}, ${batchLabel(p.batch_size)}: ${latency.text(p.p50_ms, p)} ms, ${fmtNum(p.throughput_mean)} samples/s`, p);
  const logX = spans(rows.map((p) => p.p50_ms ?? 0), 20);
  const logY = spans(rows.map((p) => p.throughput_mean ?? 0));
  return {
    svg: renderChart({
      id,
      title,
      rows: rows.length,
      description: `Throughput (samples/s) against median latency per batch (ms, ${latency.label} boundary), one point per batch size. ${rows.map(tip).join('; ')}.`,
      plot: {
        height: 280,
        marginRight: 90,
        x: { label: `p50 latency per batch (ms, ${latency.label}${logX ? ', log scale' : ''}) →`, type: logX ? 'log' : 'linear', ...(logX ? {} : { zero: true }) },
        y: { label: `↑ Throughput (samples/s${logY ? ', log scale' : ''})`, type: logY ? 'log' : 'linear', grid: true, ...(logY ? {} : { zero: true }) },
        color: ctx.palette.colorScale(rows.map(ctx.name)),
        symbol: ctx.palette.symbolScale(rows.map((p) => p.batch_size)),
        marks: [
          Plot.line(rows, { x: 'p50_ms', y: 'throughput_mean', stroke: ctx.name, z: ctx.name, strokeWidth: 1.2, strokeOpacity: 0.6 }),
          Plot.dot(rows, { x: 'p50_ms', y: 'throughput_mean', stroke: ctx.name, symbol: (p: ProfileEntry) => batchLabel(p.batch_size), r: 4, strokeWidth: 1.6, title: tip }),
          Plot.text(rows, Plot.selectLast({ x: 'p50_ms', y: 'throughput_mean', z: ctx.name, text: ctx.name, fill: ctx.name, dx: 7, textAnchor: 'start', fontSize: 9 })),
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
  const logX = spans(scored.map((p) => p.throughput_mean ?? 0));
  return {
    svg: renderChart({
      id,
      title,
      rows: scored.length,
      description:
        `Accuracy against throughput for ${scored.length} Profiles. The Pareto front (no Profile is both faster and more accurate) is: ` +
        `${front.map(tip).join('; ')}.`,
      plot: {
        height: 300,
        marginTop: 28,
        x: { label: `Throughput (samples/s${logX ? ', log scale' : ''}) →`, type: logX ? 'log' : 'linear', ...(logX ? {} : { zero: true }) },
        y: { label: '↑ Accuracy (%)', percent: true, grid: true },
        color: ctx.palette.colorScale(scored.map(ctx.name)),
        symbol: ctx.palette.symbolScale(scored.map((p) => p.batch_size)),
        marks: [
          Plot.line(front, { x: 'throughput_mean', y: 'accuracy', stroke: '#1d1d1f', strokeDasharray: '4,3' }),
          Plot.dot(scored, { x: 'throughput_mean', y: 'accuracy', stroke: ctx.name, symbol: (p: ProfileEntry) => batchLabel(p.batch_size), r: 4, strokeWidth: 1.6, title: tip }),
          // Labels run leftwards from their point: the front ends at the fastest Profile, at the chart's right edge.
          Plot.text(front, { x: 'throughput_mean', y: 'accuracy', text: 'model_name', dy: -9, dx: 4, textAnchor: 'end', fill: '#444', fontSize: 9 }),
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
