import type { Boundary, SampleColumns, ScenarioResult, StoredProfile } from '@pbh/core';
import * as Plot from '@observablehq/plot';
import { renderChart } from '../charts/render.js';
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

/** A line's quantiles at every 1/ECDF_POINTS (every sample where there are fewer): x in ms, y the fraction at or below. */
function ecdfPoints(sortedMs: Float64Array): { x: number[]; y: number[] } {
  const n = sortedMs.length;
  const x: number[] = [];
  const y: number[] = [];
  const steps = Math.min(n, ECDF_POINTS);
  for (let k = 1; k <= steps; k++) {
    const i = n <= ECDF_POINTS ? k - 1 : Math.min(n - 1, Math.ceil((k / ECDF_POINTS) * n) - 1);
    x.push(sortedMs[i]!);
    y.push((i + 1) / n);
  }
  return { x, y };
}

/**
 * A log axis' ticks at 1, 2 and 5 times a power of ten: Plot's own put a tick (most unlabelled) at every integer
 * multiple, 18 of them on a typical ECDF, the largest part of the chart after its lines.
 */
function logTicks(min: number, max: number): number[] | undefined {
  const ticks: number[] = [];
  for (let power = Math.floor(Math.log10(min)); power <= Math.ceil(Math.log10(max)); power++) {
    for (const m of [1, 2, 5]) {
      const tick = m * 10 ** power;
      if (tick >= min && tick <= max) ticks.push(Number(tick.toPrecision(1)));
    }
  }
  return ticks.length >= 2 ? ticks : undefined;
}

/** Boundary colours: fixed by BOUNDARIES' order, so a boundary keeps its colour on every Profile page. */
const BOUNDARY_COLORS = ['#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#a463f2', '#9c6b4e'];

/** What the chart is drawn from: one entry per boundary. */
export interface EcdfInput {
  id: string;
  names: string[];
  colors: string[];
  lines: { x: number[]; y: number[] }[];
  log: boolean;
  ticks: number[] | undefined;
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
  const log = max / Math.max(1e-9, min) > 30;
  const colors = present.map((b) => BOUNDARY_COLORS[BOUNDARIES.indexOf(b) % BOUNDARY_COLORS.length]!);
  return { id, names, colors, lines, log, ticks: log ? logTicks(min, max) : undefined };
}

export function latencyEcdf(samples: SampleColumns, id: string): { svg: string } | null {
  const input = ecdfInput(samples, id);
  return input && { svg: drawEcdf(input) };
}

export function drawEcdf({ id, names, colors, lines, log, ticks }: EcdfInput): string {
  const rows = lines.flatMap((line, i) => line.x.map((x, k) => ({ x, y: line.y[k]!, boundary: names[i]! })));
  return renderChart({
    id,
    title: 'Latency distribution per batch (ECDF)',
    rows: rows.length,
    description:
      `Empirical cumulative distribution of per-batch latency for ${names.join(', ')}. ` +
      `For each latency on the x axis, the y value is the fraction of batches that took at most that long.`,
    swatches: names.map((label, i) => ({ label, color: colors[i]! })),
    plot: {
      x: {
        label: `Latency per batch (ms${log ? ', log scale' : ''}) →`, type: log ? 'log' : 'linear',
        ...(ticks ? { ticks, tickFormat: (v: number) => fmtNum(v) } : { ticks: 6 }),
      },
      y: { label: '↑ Fraction of batches (%)', percent: true, grid: true, ticks: 5 },
      color: { domain: names, range: colors, label: 'Boundary' },
      marks: [Plot.line(rows, { x: 'x', y: 'y', stroke: 'boundary', curve: 'step-after', strokeWidth: 1.6 })],
    },
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
