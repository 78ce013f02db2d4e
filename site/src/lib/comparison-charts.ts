import { colorAt } from '../charts/svg.js';
import { xyChart, type XYSeries } from '../charts/xy-chart.js';
import { curves, engineSeries, paretoFront, type Curve } from './comparisons.js';
import type { ProfileEntry } from './data.js';
import { fmtNum, fmtPct } from './format.js';
import { latencyHeading } from './labels.js';

export interface ChartView {
  svg: string;
  legend: { name: string; color: string }[];
  table: { columns: string[]; rows: string[][] };
}

function toSeries(list: Curve[], mark: XYSeries['mark'], note: (p: ProfileEntry) => string): XYSeries[] {
  return list.map((c, i) => ({
    name: c.name,
    mark,
    color: colorAt(i),
    points: c.points.map((pt) => ({ x: pt.x, y: pt.y, note: note(pt.profile) })),
  }));
}

function legendOf(series: XYSeries[]): ChartView['legend'] {
  return series.map((s) => ({ name: s.name, color: s.color ?? colorAt(0) }));
}

function describeCurves(list: Curve[], x: (v: number) => string, y: (v: number) => string): string {
  return list.map((c) => `${c.name}: ${c.points.map((p) => `${x(p.x)} → ${y(p.y)}`).join(', ')}`).join('. ');
}

const batchText = (v: number): string => `batch ${v}`;

/** Headline latencies as charts read them: one boundary named on the axis, or each value naming its own where they mix. */
function headlineLatency(profiles: ProfileEntry[]): { label: string; text: (ms: number | null, p: ProfileEntry) => string } {
  const heading = latencyHeading(profiles);
  return {
    label: heading.label,
    text: (ms, p) => (heading.mixed && ms !== null ? `${fmtNum(ms)} (${p.latency_boundary})` : fmtNum(ms)),
  };
}

/** Headline latency against batch size, one line per engine (and precision). */
export function batchLatencyChart(profiles: ProfileEntry[], id: string, title: string): ChartView | null {
  const list = curves(profiles, engineSeries(profiles), (p) => p.batch_size, (p) => p.p50_ms);
  if (list.length === 0) return null;
  const latency = headlineLatency(profiles);
  const batches = [...new Set(profiles.map((p) => p.batch_size))].sort((a, b) => a - b);
  const series = toSeries(list, 'linedots', (p) => `p99 ${latency.text(p.p99_ms, p)} ms`);
  return {
    svg: xyChart({
      id,
      title,
      description: `Median latency per batch (ms, ${latency.label} boundary) against batch size. ${describeCurves(list, batchText, (v) => `${fmtNum(v)} ms`)}.`,
      x: { label: 'Batch size (log scale)', log: batches.length > 1 && batches[batches.length - 1]! / batches[0]! > 4, ticks: batches },
      y: { label: `p50 latency per batch (ms, ${latency.label})`, zero: true },
      series,
      height: 260,
    }),
    legend: legendOf(series),
    table: {
      columns: ['Engine', 'Batch size', `p50 ms (${latency.label})`, `p99 ms (${latency.label})`, 'Throughput (samples/s)'],
      rows: list.flatMap((c) =>
        c.points.map((pt) => [c.name, String(pt.x), latency.text(pt.profile.p50_ms, pt.profile), latency.text(pt.profile.p99_ms, pt.profile), fmtNum(pt.profile.throughput_mean)]),
      ),
    },
  };
}

/** Throughput against headline latency, each point a batch size: the trade-off batching buys. */
export function tradeoffChart(profiles: ProfileEntry[], id: string, title: string): ChartView | null {
  const list = curves(profiles, engineSeries(profiles), (p) => p.p50_ms, (p) => p.throughput_mean);
  if (list.length === 0) return null;
  const latency = headlineLatency(profiles);
  const series = toSeries(list, 'linedots', (p) => `batch ${p.batch_size}`);
  return {
    svg: xyChart({
      id,
      title,
      description: `Throughput (samples/s) against median latency per batch (ms, ${latency.label} boundary), one point per batch size. ${describeCurves(list, (v) => `${fmtNum(v)} ms`, (v) => `${fmtNum(v)} samples/s`)}.`,
      x: { label: `p50 latency per batch (ms, ${latency.label})`, zero: true },
      y: { label: 'Throughput (samples/s)', zero: true },
      series,
      height: 260,
    }),
    legend: legendOf(series),
    table: {
      columns: ['Engine', 'Batch size', `p50 ms (${latency.label})`, 'Throughput (samples/s)'],
      rows: list.flatMap((c) => c.points.map((pt) => [c.name, String(pt.profile.batch_size), latency.text(pt.x, pt.profile), fmtNum(pt.y)])),
    },
  };
}

/** Throughput or accuracy against the model's actual weight sparsity, one line per engine and batch size. */
export function sparsityChart(profiles: ProfileEntry[], id: string, metric: 'throughput' | 'accuracy', title: string): ChartView | null {
  const value = metric === 'throughput' ? (p: ProfileEntry) => p.throughput_mean : (p: ProfileEntry) => p.accuracy;
  const series = engineSeries(profiles);
  const list = curves(profiles, (p) => `${series(p)}, batch ${p.batch_size}`, (p) => p.sparsity_actual, value);
  const levels = new Set(profiles.map((p) => p.sparsity_actual));
  if (list.length === 0 || levels.size < 2) return null;
  const lines = toSeries(list, 'linedots', (p) => p.model_name);
  const yText = metric === 'throughput' ? (v: number) => `${fmtNum(v)} samples/s` : (v: number) => fmtPct(v);
  return {
    svg: xyChart({
      id,
      title,
      description: `${metric === 'throughput' ? 'Throughput (samples/s)' : 'Accuracy'} against the fraction of zero weights. ${describeCurves(list, (v) => `${fmtPct(v)} sparse`, yText)}.`,
      x: { label: 'Weight sparsity (% zeros)', percent: true, min: 0 },
      y: metric === 'throughput' ? { label: 'Throughput (samples/s)', zero: true } : { label: 'Accuracy (%)', percent: true },
      series: lines,
      height: 260,
    }),
    legend: legendOf(lines),
    table: {
      columns: ['Engine, batch', 'Model', 'Sparsity', metric === 'throughput' ? 'Throughput (samples/s)' : 'Accuracy'],
      rows: list.flatMap((c) => c.points.map((pt) => [c.name, pt.profile.model_name, fmtPct(pt.x), yText(pt.y)])),
    },
  };
}

/** Every scored Profile as a point, and the accuracy-vs-throughput Pareto front joining the undominated ones. */
export function paretoChart(profiles: ProfileEntry[], id: string, title: string): (ChartView & { front: ProfileEntry[] }) | null {
  const scored = profiles.filter((p) => p.accuracy !== null && p.throughput_mean !== null);
  if (scored.length === 0) return null;
  const front = paretoFront(scored);
  const engine = engineSeries(scored);
  const list = curves(scored, engine, (p) => p.throughput_mean, (p) => p.accuracy);
  const series: XYSeries[] = [
    ...toSeries(list, 'dots', (p) => `${p.model_name}, batch ${p.batch_size}`),
    {
      name: 'Pareto front',
      mark: 'linedots',
      color: '#1d1d1f',
      points: front.map((p) => ({ x: p.throughput_mean ?? 0, y: p.accuracy ?? 0 })),
    },
  ];
  return {
    svg: xyChart({
      id,
      title,
      description:
        `Accuracy against throughput for ${scored.length} Profiles. The Pareto front (no Profile is both faster and more accurate) is: ` +
        `${front.map((p) => `${p.model_name} on ${engine(p)} batch ${p.batch_size} (${fmtNum(p.throughput_mean)} samples/s, ${fmtPct(p.accuracy)})`).join('; ')}.`,
      x: { label: 'Throughput (samples/s)', zero: true },
      y: { label: 'Accuracy (%)', percent: true, ...(Math.max(...scored.map((p) => p.accuracy ?? 0)) >= 1 ? { max: 1 } : {}) },
      series,
      height: 280,
    }),
    legend: legendOf(series),
    table: {
      columns: ['Model', 'Engine', 'Batch', 'Throughput (samples/s)', 'Accuracy', 'On the front'],
      rows: scored.map((p) => [p.model_name, engine(p), String(p.batch_size), fmtNum(p.throughput_mean), fmtPct(p.accuracy), front.includes(p) ? 'yes' : '']),
    },
    front,
  };
}
