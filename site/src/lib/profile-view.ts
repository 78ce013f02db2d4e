import type { Boundary, SampleColumns, ScenarioResult, StoredProfile } from '@pbh/core';
import * as Plot from '@observablehq/plot';
import { timeAxis } from '../charts/axes.js';
import { framedChart } from '../charts/framed.js';
import { stepAfterLines } from '../charts/step-lines.js';
import { fmtNum } from './format.js';

/**
 * What each timing boundary covers, in the order the site lists them: engine, the stream scenarios' headline, first;
 * query, the headline of server and offline (where it is the only timed boundary), last, so every other boundary
 * keeps its colour.
 */
export const BOUNDARIES: { key: Boundary; label: string; meaning: string }[] = [
  { key: 'engine', label: 'engine', meaning: "measured in the runtime's process around its call, inputs and outputs wrapped — the headline" },
  { key: 'predict', label: 'predict', meaning: "the harness' call, including any IPC to a worker" },
  { key: 'transport', label: 'transport', meaning: 'predict − engine per batch: the transport between PBH and a worker, or the in-process call' },
  { key: 'end_to_end', label: 'end_to_end', meaning: 'preprocess + predict' },
  { key: 'model_only', label: 'model_only', meaning: 'the runtime timing a resident input, no IPC (native workers)' },
  { key: 'query', label: 'query', meaning: "server/offline: from the query's scheduled arrival to its completion, queueing included" },
];

export function boundaryMeaning(key: Boundary): string {
  return BOUNDARIES.find((b) => b.key === key)?.meaning ?? key;
}

/** What each LoadGen scenario issues and reports, in words. */
export const SCENARIO_MEANING: Record<ScenarioResult['kind'], string> = {
  single_stream: 'one query at a time, the next as soon as the previous completes; reports the p90 latency',
  multi_stream: 'one query of several samples at a time, the next as soon as the previous completes; reports the p99 latency',
  server: 'queries arrive at random (Poisson) at a target rate, whether or not earlier ones are done; reports the p99 latency from scheduled arrival, which must stay under the latency bound',
  offline: 'every sample at once in one query; reports samples per second',
};

/** The sentence for a scenario's rules and executor, as the Profile recorded them. */
export function scenarioRulesText(scenario: Pick<ScenarioResult, 'rules' | 'executor'>): { rules: string; executor: string } {
  return {
    rules: scenario.rules === 'mlperf' ? "MLPerf's rules (pbh run --mlperf)" : "PBH's short rules (pbh run --mlperf judges by MLPerf's)",
    executor:
      scenario.executor === 'runtime' ? "queries issued and timed in the runtime's process" : "queries issued and timed by PBH's executor",
  };
}

/** The rate a server's peak search settled on: the highest VALID one tried, or null when none was. */
export function peakRate(tries: ScenarioResult['peak_search']): number | null {
  const valid = tries.filter((t) => t.validity === 'VALID').map((t) => t.target_qps);
  return valid.length > 0 ? Math.max(...valid) : null;
}

/** Which process the CPU and memory metrics measured, in words. */
export function processText(process: StoredProfile['engine']['process']): string {
  if (process === 'harness') return "PBH's own process, where this engine runs in process";
  if (process === 'worker') return "the engine's worker process, not PBH's";
  return 'not recorded (the model was never prepared, or the Profile predates this record)';
}

/** How the accuracy pass ran a last batch smaller than the batch size, in words. */
export function lastBatchText(lastBatch: StoredProfile['workload']['last_batch']): string {
  if (lastBatch === 'none') return 'every batch was full';
  if (lastBatch === 'dynamic') return 'the last, smaller batch ran at its own size';
  if (lastBatch === 'padded') return "the last batch was padded to the batch size and the padding's outputs dropped";
  return 'last-batch handling not recorded';
}

/**
 * Most points an ECDF line keeps: its quantiles at every 1/64 (the table under the chart has the exact p50-p99). Each
 * point is two path steps; at 160 the chart was 16 KB of a 45 KB Profile page, the largest part of 10,000 of them.
 */
const ECDF_POINTS = 64;

/** A line's quantiles at every 1/ECDF_POINTS (every sample where there are fewer): x in ms, y the percentage at or below. */
function ecdfPoints(sortedMs: Float64Array): { x: number[]; y: number[] } {
  const n = sortedMs.length;
  const x: number[] = [];
  const y: number[] = [];
  const steps = Math.min(n, ECDF_POINTS);
  for (let k = 1; k <= steps; k++) {
    const i = n <= ECDF_POINTS ? k - 1 : Math.min(n - 1, Math.ceil((k / ECDF_POINTS) * n) - 1);
    x.push(sortedMs[i]!);
    y.push((100 * (i + 1)) / n);
  }
  return { x, y };
}

/** 1, 2 and 5 times each power of ten from below `min` to above `max`, in order. */
function oneTwoFive(min: number, max: number): number[] {
  const values: number[] = [];
  for (let power = Math.floor(Math.log10(min)); power <= Math.ceil(Math.log10(max)); power++) {
    for (const m of [1, 2, 5]) values.push(Number((m * 10 ** power).toPrecision(1)));
  }
  return values;
}

/** `value` to one significant digit, down or up (0.0137 → 0.01, 0.87 → 0.9); a hair of slack for float division. */
function oneDigit(value: number, round: (n: number) => number, slack: number): number {
  const unit = 10 ** Math.floor(Math.log10(value));
  return Number((round((value / unit) * slack) * unit).toPrecision(1));
}

/**
 * A log axis from `min` down to one significant digit to `max` up to one, ticked at 1, 2 and 5 times each power of
 * ten: Plot's own ticks put one (most unlabelled) at every integer multiple, 18 of them on a typical ECDF, the largest
 * part of the chart after its lines. The rounded ends let Profiles of a similar latency share one frame (framed.ts).
 */
function logAxis(min: number, max: number): { domain: [number, number]; ticks: number[] } {
  const [lo, hi] = [oneDigit(min, Math.floor, 1 + 1e-9), oneDigit(max, Math.ceil, 1 - 1e-9)];
  return { domain: [lo, hi], ticks: oneTwoFive(lo, hi).filter((v) => v >= lo && v <= hi) };
}

/** A linear axis over [min, max] extended to round ends at the step of about six ticks (Plot's `nice`). */
function linearDomain(min: number, max: number): [number, number] {
  // A single latency (one batch, or identical ones) gets a tenth either side: a zero-width domain has no ticks.
  const [lo, hi] = max > min ? [min, max] : [min * 0.9, max * 1.1 || 1];
  const [niceLo, niceHi] = Plot.scale({ x: { type: 'linear', domain: [lo, hi], nice: 6 } }).domain as [number, number];
  return [niceLo, niceHi];
}

/** Boundary colours: fixed by BOUNDARIES' order, so a boundary keeps its colour on every Profile page. */
const BOUNDARY_COLORS = ['#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#a463f2', '#9c6b4e'];

/** What the chart is drawn from: one entry per boundary. */
interface EcdfInput {
  id: string;
  names: string[];
  colors: string[];
  lines: { x: number[]; y: number[] }[];
  min: number;
  max: number;
}

/** Each boundary's latencies in ms, sorted: counted, filled, then sorted as a typed array (no comparator calls). */
function latenciesByBoundary(samples: SampleColumns): Map<Boundary, Float64Array> {
  const counts = new Map<Boundary, number>();
  for (const b of samples.boundary) counts.set(b, (counts.get(b) ?? 0) + 1);
  const lists = new Map<Boundary, { values: Float64Array; filled: number }>();
  for (const [b, n] of counts) lists.set(b, { values: new Float64Array(n), filled: 0 });
  samples.boundary.forEach((b, i) => {
    const list = lists.get(b)!;
    list.values[list.filled++] = samples.ns[i]! / 1e6;
  });
  return new Map([...lists].map(([b, list]) => [b, list.values.sort()]));
}

function ecdfInput(samples: SampleColumns, id: string): EcdfInput | null {
  if (samples.ns.length === 0) return null;
  const byBoundary = latenciesByBoundary(samples);
  const present = BOUNDARIES.filter((b) => byBoundary.has(b.key));
  const names = present.map((b) => `${b.label} (n=${byBoundary.get(b.key)!.length})`);
  const lines = present.map((b) => ecdfPoints(byBoundary.get(b.key)!));
  let [min, max] = [Infinity, -Infinity];
  for (const line of lines) [min, max] = [Math.min(min, line.x[0]!), Math.max(max, line.x[line.x.length - 1]!)];
  const colors = present.map((b) => BOUNDARY_COLORS[BOUNDARIES.indexOf(b) % BOUNDARY_COLORS.length]!);
  return { id, names, colors, lines, min, max };
}

export function latencyEcdf(samples: SampleColumns, id: string): { svg: string } | null {
  const input = ecdfInput(samples, id);
  return input && { svg: drawEcdf(input) };
}

/** Plot's default margins for a chart with a y axis on the left and an x axis below, fixed for framed.ts. */
const ECDF_MARGINS = { marginTop: 20, marginRight: 20, marginBottom: 40, marginLeft: 40 };

function drawEcdf(input: EcdfInput): string {
  // The axis in the unit its latencies read best in (µs, ms or s), never an SI prefix on a tick.
  const unit = timeAxis([input.max]);
  const f = unit.fromMs;
  const { id, names, colors } = input;
  const lines = f === 1 ? input.lines : input.lines.map((line) => ({ x: line.x.map((v) => v * f), y: line.y }));
  const [min, max] = [input.min * f, input.max * f];
  const log = max / Math.max(1e-9, min) > 30;
  const x: Plot.ScaleOptions = log
    ? { type: 'log', ...logAxis(Math.max(1e-9, min), max), tickFormat: (v: number) => fmtNum(v) }
    : { type: 'linear', domain: linearDomain(min, max), ticks: 6 };
  return framedChart({
    id,
    title: 'Latency distribution per batch (ECDF)',
    rows: lines.reduce((n, line) => n + line.x.length, 0),
    description:
      `Empirical cumulative distribution of per-batch latency for ${names.join(', ')}. ` +
      `For each latency on the x axis, the y value is the fraction of batches that took at most that long.`,
    swatches: names.map((label, i) => ({ label, color: colors[i]! })),
    frame: {
      ...ECDF_MARGINS,
      x: { ...x, label: `Latency per batch (${unit.unit}${log ? ', log scale' : ''}) →` },
      y: { label: '↑ Fraction of batches (%)', domain: [0, 100], grid: true, ticks: [0, 25, 50, 75, 100] },
    },
    marks: (scales) => stepAfterLines(lines.map((line, i) => ({ x: line.x, y: line.y, stroke: colors[i]! })), scales, 1.6),
  });
}

export const TOP_LAYERS = 12;

/** A <meter>'s value: four significant digits, all a bar of a few rem can show (the figure beside it is the reading). */
export function meterValue(value: number): number {
  return Number(value.toPrecision(4));
}

export function opTypeShares(profile: StoredProfile): { op: string; share: number; layers: number }[] {
  const byOp = new Map<string, { share: number; layers: number }>();
  for (const l of profile.layers) {
    const seen = byOp.get(l.op_type) ?? { share: 0, layers: 0 };
    byOp.set(l.op_type, { share: seen.share + l.share, layers: seen.layers + 1 });
  }
  return [...byOp.entries()].map(([op, v]) => ({ op, ...v })).sort((a, b) => b.share - a.share);
}
