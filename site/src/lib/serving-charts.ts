import * as Plot from '@observablehq/plot';
import { paddedScale, timeAxis } from '../charts/axes.js';
import { makePalette, type Palette } from '../charts/palette.js';
import { renderChart } from '../charts/render.js';
import type { ChartView } from './comparison-charts.js';
import { currentProfiles } from './comparisons.js';
import type { ProfileEntry } from './data.js';
import { fmtNum } from './format.js';
import { paretoFront } from './pareto.js';

/** One generate Profile as a point of a serving sweep. */
export interface ServingPoint {
  p: ProfileEntry;
  /** The sweep it belongs to: entries of one engine that differ only in their load (rate, concurrency) are one. */
  series: string;
  /** Served by an OpenAI-compatible endpoint (engine openai), not in PBH's worker. */
  endpoint: boolean;
  /** Tokens/s one user sees: 1000 / TPOT p50 in ms. */
  perUser: number;
  /** Output tokens/s over every request: the system's. */
  system: number;
  /** Requests/s served: the load the point carried, whichever shape offered it. */
  load: number;
  /** What was offered: "Poisson 50 req/s, ≤ 4 in flight", "4 in flight at once", "one at a time". */
  offered: string;
  ttftP50Ms: number;
  ttftP99Ms: number;
  invalid: boolean;
}

// A rate this high is no rate: every request is due at once and the concurrency cap is the load (a concurrency sweep).
const ALL_AT_ONCE_RPS = 1e5;

function offered(p: ProfileEntry): string {
  const g = p.profile.generation!;
  if (g.scenario !== 'server' || g.request_rate === null) return 'one at a time';
  if (g.request_rate >= ALL_AT_ONCE_RPS) return `${g.concurrency} in flight at once`;
  return `Poisson ${fmtNum(g.request_rate)} req/s, ≤ ${g.concurrency} in flight`;
}

/** The series' identity: the engine, its options, device and precision (the scenario, which sets the load, is not in it). */
function sweepKey(p: ProfileEntry): string {
  return JSON.stringify([p.engine_name, p.profile.engine.options, p.engine_device, p.precisionLabel, p.hardware, p.model_name]);
}

/** A series' name: the engine, or "endpoint NAME" (the model the server says it serves); numbered where two share it. */
function seriesNames(profiles: readonly ProfileEntry[]): (p: ProfileEntry) => string {
  const base = (p: ProfileEntry): string => {
    if (p.engine_name !== 'openai') return p.engine_name;
    const served = String(p.profile.engine.facts['served_model'] ?? '').split('/').filter(Boolean).at(-1);
    return `endpoint ${served ?? '?'}`;
  };
  const keysOf = new Map<string, string[]>();
  for (const p of profiles) {
    const keys = keysOf.get(base(p)) ?? [];
    if (!keys.includes(sweepKey(p))) keys.push(sweepKey(p));
    keysOf.set(base(p), keys);
  }
  return (p) => {
    const keys = keysOf.get(base(p))!;
    return keys.length > 1 ? `${base(p)} #${keys.indexOf(sweepKey(p)) + 1}` : base(p);
  };
}

/** Every ok generate Profile with a TPOT as a serving point, its series named over all of them (stable site-wide). */
export function servingPoints(profiles: readonly ProfileEntry[]): ServingPoint[] {
  const generated = profiles.filter((p) => p.status === 'ok' && p.profile.generation && p.profile.generation.tpot.p50 > 0);
  const name = seriesNames(generated);
  return generated.map((p) => {
    const g = p.profile.generation!;
    return {
      p,
      series: name(p),
      endpoint: p.engine_name === 'openai',
      perUser: 1e9 / g.tpot.p50,
      system: g.output_tokens_per_s,
      load: g.request_throughput,
      offered: offered(p),
      ttftP50Ms: g.ttft.p50 / 1e6,
      ttftP99Ms: g.ttft.p99 / 1e6,
      invalid: p.validity === 'INVALID',
    };
  });
}

const cache = new WeakMap<readonly ProfileEntry[], { points: ServingPoint[]; palette: Palette }>();

/**
 * The site's serving points (each cell's current Profile) and their colours, from every Profile the site holds, once
 * per build: a series keeps its name and colour on every model page.
 */
export function siteServing(all: readonly ProfileEntry[]): { points: ServingPoint[]; palette: Palette } {
  const seen = cache.get(all);
  if (seen) return seen;
  const points = servingPoints(currentProfiles([...all]));
  const made = { points, palette: makePalette(points.map((d) => d.series), []) };
  cache.set(all, made);
  return made;
}

const MARGINS = { marginTop: 20, marginRight: 24, marginBottom: 40, marginLeft: 64 };
const where = (d: ServingPoint): string => `${d.series}${d.endpoint ? ' (endpoint)' : ' (in-process)'}, ${d.offered}${d.invalid ? ', INVALID' : ''}`;
const byLoad = (points: readonly ServingPoint[]): ServingPoint[] => [...points].sort((a, b) => a.series.localeCompare(b.series) || a.load - b.load);
const columns = ['Series', 'Engine entry', 'Served by', 'Offered', 'Requests/s served', 'TTFT p50 ms', 'TTFT p99 ms', 'TPOT p50 ms', 'Tokens/s per user', 'Output tokens/s', 'On the front', 'Verdict'];

/** The serving Pareto front: more tokens/s per user and more in all, over the points not INVALID (a late client's figures are not the server's). */
export function servingFront(points: readonly ServingPoint[]): ServingPoint[] {
  return paretoFront(points.filter((d) => !d.invalid), (d) => d.perUser, (d) => d.system);
}

function table(points: readonly ServingPoint[]): ChartView['table'] {
  const front = new Set(servingFront(points));
  return {
    columns,
    rows: byLoad(points).map((d) => [
      d.series, d.p.engine_entry, d.endpoint ? 'endpoint' : 'in-process', d.offered, fmtNum(d.load), fmtNum(d.ttftP50Ms), fmtNum(d.ttftP99Ms),
      fmtNum(1000 / d.perUser), fmtNum(d.perUser), fmtNum(d.system), front.has(d) ? 'yes' : '', d.p.validity ?? '—',
    ]),
  };
}

/** A dot per point, coloured by series, shaped by who served it; an INVALID point hollow (its verdict in the tooltip). */
function dots(rows: readonly ServingPoint[], x: Plot.ChannelValue, y: Plot.ChannelValue, tip: (d: ServingPoint) => string): Plot.Markish[] {
  const shape = (d: ServingPoint): string => (d.endpoint ? 'endpoint' : 'in-process');
  return [
    Plot.dot(rows.filter((d) => !d.invalid), { x, y, stroke: 'series', fill: 'series', symbol: shape, r: 4, title: tip }),
    Plot.dot(rows.filter((d) => d.invalid), { x, y, stroke: 'series', fill: 'white', symbol: shape, r: 4, title: tip }),
  ];
}

/**
 * System output tokens/s against tokens/s per user (1000 / TPOT p50), one point a Profile, a line per sweep, and the
 * Pareto front over the points not INVALID (no point has both more per user and more in all): MLPerf Endpoints' curve.
 */
export function tokensChart(points: readonly ServingPoint[], palette: Palette, id: string, title: string): (ChartView & { front: ServingPoint[] }) | null {
  if (points.length === 0) return null;
  const front = servingFront(points);
  const onFront = new Set(front);
  const tip = (d: ServingPoint): string => `${where(d)}: ${fmtNum(d.perUser)} tokens/s per user, ${fmtNum(d.system)} output tokens/s${onFront.has(d) ? ', on the Pareto front' : ''}`;
  const rows = byLoad(points);
  const x = paddedScale(rows.map((d) => d.perUser));
  const y = paddedScale(rows.map((d) => d.system));
  return {
    front,
    svg: renderChart({
      id,
      title,
      rows: rows.length,
      description: `Output tokens/s of the whole system against tokens/s each user sees, for ${rows.length} Profiles; up and right is better. The Pareto front: ${front.map(tip).join('; ')}.`,
      plot: {
        height: 300,
        ...MARGINS,
        x: { label: `Tokens/s per user (1000 / TPOT p50${x.type === 'log' ? ', log scale' : ''}) →`, ...x },
        y: { label: `↑ Output tokens/s (system${y.type === 'log' ? ', log scale' : ''})`, ...y, grid: true },
        color: palette.colorScale(rows.map((d) => d.series)),
        symbol: { domain: ['in-process', 'endpoint'], range: ['circle', 'square'], legend: true, label: 'Served by' },
        marks: [
          Plot.line(rows, { x: 'perUser', y: 'system', stroke: 'series', z: 'series', strokeWidth: 1.4, sort: 'load' }),
          Plot.line(front, { x: 'perUser', y: 'system', stroke: '#1d1d1f', strokeDasharray: '4,3' }),
          // Rings round the front's points: an annotation, not a data point of its own (the browser tests count dots).
          Plot.dot(front, { x: 'perUser', y: 'system', r: 8, stroke: '#1d1d1f', strokeWidth: 1, className: 'annotation' }),
          ...dots(rows, 'perUser', 'system', tip),
        ],
      },
    }),
    table: table(points),
  };
}

/** TTFT p99 against the requests/s served, a line per sweep: where queueing starts as the load grows. */
export function ttftLoadChart(points: readonly ServingPoint[], palette: Palette, id: string, title: string): ChartView | null {
  if (points.length === 0) return null;
  const rows = byLoad(points);
  const unit = timeAxis(rows.map((d) => d.ttftP99Ms));
  const at = (d: ServingPoint): number => d.ttftP99Ms * unit.fromMs;
  const x = paddedScale(rows.map((d) => d.load));
  const y = paddedScale(rows.map(at));
  const tip = (d: ServingPoint): string => `${where(d)}: ${fmtNum(d.load)} req/s served, TTFT p50 ${fmtNum(d.ttftP50Ms)} ms, p99 ${fmtNum(d.ttftP99Ms)} ms`;
  return {
    svg: renderChart({
      id,
      title,
      rows: rows.length,
      description: `TTFT p99 (${unit.unit}, from each request's scheduled arrival) against requests/s served, for ${rows.length} Profiles. ${rows.map(tip).join('; ')}.`,
      plot: {
        height: 300,
        ...MARGINS,
        x: { label: `Requests/s served${x.type === 'log' ? ' (log scale)' : ''} →`, ...x },
        y: { label: `↑ TTFT p99 (${unit.unit}${y.type === 'log' ? ', log scale' : ''})`, ...y, grid: true },
        color: palette.colorScale(rows.map((d) => d.series)),
        symbol: { domain: ['in-process', 'endpoint'], range: ['circle', 'square'], legend: true, label: 'Served by' },
        marks: [
          Plot.line(rows, { x: 'load', y: at, stroke: 'series', z: 'series', strokeWidth: 1.4 }),
          ...dots(rows, 'load', at, tip),
        ],
      },
    }),
    table: table(points),
  };
}

/** Serving points per model, device and hardware: one pair of charts each. */
export function servingGroups(points: readonly ServingPoint[]): Map<string, ServingPoint[]> {
  const groups = new Map<string, ServingPoint[]>();
  for (const d of points) {
    const key = `${d.p.model_name} · ${d.p.engine_device} · ${d.p.hardware}`;
    groups.set(key, [...(groups.get(key) ?? []), d]);
  }
  return new Map([...groups.entries()].sort(([a], [b]) => a.localeCompare(b)));
}
