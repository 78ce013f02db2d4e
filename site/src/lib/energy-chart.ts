import * as Plot from '@observablehq/plot';
import { batchLabel } from '../charts/palette.js';
import { paddedScale } from '../charts/axes.js';
import { heightForLabels, spreadLabels } from '../charts/direct-labels.js';
import { renderChart } from '../charts/render.js';
import { MARGINS, noisyText, type ChartView } from './comparison-charts.js';
import type { ProfileEntry } from './data.js';
import { fmtJoules, methodWords } from './energy.js';
import { fmtNum } from './format.js';
import { paretoFront } from './pareto.js';
import type { SiteSeries } from './site-series.js';

/** The Profiles no other one beats on both, more samples/s and fewer joules a sample, by throughput. */
export function energyFront(profiles: readonly ProfileEntry[]): ProfileEntry[] {
  const measured = profiles.filter((p) => p.energy_j_per_sample !== null && p.throughput_mean !== null);
  return paretoFront(measured, (p) => p.throughput_mean!, (p) => -p.energy_j_per_sample!);
}

/**
 * Joules per sample against throughput, one point a Profile (colour: engine series, symbol: batch size), and the
 * Pareto front. The method of each figure is in its tooltip and the table, and the caption names every method shown,
 * so an estimate is never read as a measurement.
 */
export function energyParetoChart(profiles: ProfileEntry[], ctx: SiteSeries, id: string, title: string): (ChartView & { front: ProfileEntry[]; methods: string[] }) | null {
  const rows = profiles.filter((p) => p.energy_j_per_sample !== null && p.throughput_mean !== null);
  if (rows.length === 0) return null;
  const front = energyFront(rows);
  const methods = [...new Set(rows.map((p) => methodWords(p.energy_method)))];
  const tip = (p: ProfileEntry): string =>
    `${ctx.name(p)}, ${batchLabel(p.batch_size)}: ${fmtNum(p.throughput_mean)} samples/s, ${fmtJoules(p.energy_j_per_sample)} a sample (${methodWords(p.energy_method)})${noisyText(p) ? `; ${noisyText(p)}` : ''}`;
  const spread = (values: number[]): boolean => values.length > 1 && Math.max(...values) / Math.min(...values) > 10;
  const logX = spread(rows.map((p) => p.throughput_mean!));
  const logY = spread(rows.map((p) => p.energy_j_per_sample!));
  // One unit for the axis that keeps its ticks whole: µJ, mJ or J by the largest figure.
  const largest = Math.max(...rows.map((p) => p.energy_j_per_sample!));
  const [unit, scale] = largest < 1e-3 ? ['µJ', 1e6] : largest < 1 ? ['mJ', 1e3] : ['J', 1];
  const scaled = (p: ProfileEntry): number => p.energy_j_per_sample! * scale;
  const y = paddedScale(rows.map(scaled), { log: logY });
  const margins = { ...MARGINS, marginLeft: 60 };
  const height = heightForLabels(front.length, margins.marginTop, margins.marginBottom, 280);
  // The front's labels spread apart in y (direct-labels.ts), beside their points: two close points' names never overlap.
  const labelY = spreadLabels(front.map(scaled), y, [height - margins.marginBottom, margins.marginTop]);
  const labels = front.map((p, i) => ({ x: p.throughput_mean!, labelY: labelY[i]!, text: ctx.name(p) }));
  return {
    svg: renderChart({
      id,
      title,
      rows: rows.length,
      description: `Energy per sample (${unit}, ${methods.join(', ')}) against throughput for ${rows.length} Profiles; lower right is better. The Pareto front (no Profile both faster and thriftier) is: ${front.map(tip).join('; ')}.`,
      plot: {
        height,
        // Padded domains and plain-number ticks (charts/axes.ts): no mark on the frame, no "100k" on a samples/s axis.
        ...margins,
        x: { label: `Throughput (samples/s${logX ? ', log scale' : ''}) →`, ...paddedScale(rows.map((p) => p.throughput_mean!), { log: logX }) },
        y: { label: `↑ Energy per sample (${unit}${logY ? ', log scale' : ''}; ${methods.join(', ')})`, ...y, grid: true },
        color: ctx.palette.colorScale(rows.map(ctx.name)),
        symbol: ctx.palette.symbolScale(rows.map((p) => p.batch_size)),
        marks: [
          Plot.line(front, { x: 'throughput_mean', y: scaled, stroke: '#1d1d1f', strokeDasharray: '4,3' }),
          Plot.dot(rows, { x: 'throughput_mean', y: scaled, stroke: ctx.name, symbol: (p: ProfileEntry) => batchLabel(p.batch_size), r: 4, strokeWidth: 1.6, title: tip }),
          Plot.text(labels, { x: 'x', y: 'labelY', text: 'text', dx: 8, textAnchor: 'start', fill: '#444', fontSize: 11 }),
        ],
      },
    }),
    table: {
      columns: ['Engine', 'Batch size', 'Throughput (samples/s)', 'Energy per sample', 'Method', 'On the front', 'Noisy'],
      rows: rows.map((p) => [ctx.name(p), String(p.batch_size), fmtNum(p.throughput_mean), fmtJoules(p.energy_j_per_sample), methodWords(p.energy_method), front.includes(p) ? 'yes' : '', noisyText(p)]),
    },
    front,
    methods,
  };
}
