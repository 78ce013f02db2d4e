import type { Boundary, SampleColumns, ScenarioResult, StoredProfile } from '@pbh/core';
import * as Plot from '@observablehq/plot';
import { barChart } from '../charts/bar.js';
import { renderChart } from '../charts/render.js';
import { fmtFlops, fmtNum, fmtPct } from './format.js';

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

/** Most points an ECDF line keeps: quantiles beyond this add bytes, not information. */
const ECDF_POINTS = 160;

function ecdfPoints(sortedMs: number[], boundary: string): { x: number; y: number; boundary: string }[] {
  const n = sortedMs.length;
  if (n <= ECDF_POINTS) return sortedMs.map((x, i) => ({ x, y: (i + 1) / n, boundary }));
  const points: { x: number; y: number; boundary: string }[] = [];
  for (let k = 1; k <= ECDF_POINTS; k++) {
    const i = Math.min(n - 1, Math.ceil((k / ECDF_POINTS) * n) - 1);
    points.push({ x: sortedMs[i]!, y: (i + 1) / n, boundary });
  }
  return points;
}

/** Boundary colours: fixed by BOUNDARIES' order, so a boundary keeps its colour on every Profile page. */
const BOUNDARY_COLORS = ['#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#a463f2', '#9c6b4e'];

export function latencyEcdf(samples: SampleColumns, id: string): { svg: string } | null {
  if (samples.ns.length === 0) return null;
  const byBoundary = new Map<Boundary, number[]>();
  // Pushed in place: copying the list per sample made a Profile of 5,000 samples cost tens of milliseconds.
  samples.boundary.forEach((b, i) => {
    const list = byBoundary.get(b);
    if (list) list.push(samples.ns[i]! / 1e6);
    else byBoundary.set(b, [samples.ns[i]! / 1e6]);
  });
  const present = BOUNDARIES.filter((b) => byBoundary.has(b.key));
  const names = present.map((b) => `${b.label} (n=${byBoundary.get(b.key)?.length ?? 0})`);
  const rows = present.flatMap((b, i) => ecdfPoints((byBoundary.get(b.key) ?? []).sort((x, y) => x - y), names[i]!));
  const all = rows.map((p) => p.x);
  const log = Math.max(...all) / Math.max(1e-9, Math.min(...all)) > 30;
  const svg = renderChart({
    id,
    title: 'Latency distribution per batch (ECDF)',
    rows: rows.length,
    description:
      `Empirical cumulative distribution of per-batch latency for ${names.join(', ')}. ` +
      `For each latency on the x axis, the y value is the fraction of batches that took at most that long.`,
    plot: {
      x: { label: `Latency per batch (ms${log ? ', log scale' : ''}) →`, type: log ? 'log' : 'linear' },
      y: { label: '↑ Fraction of batches (%)', percent: true, grid: true },
      color: { domain: names, range: present.map((b) => BOUNDARY_COLORS[BOUNDARIES.indexOf(b) % BOUNDARY_COLORS.length]!), legend: true, label: 'Boundary' },
      marks: [Plot.line(rows, { x: 'x', y: 'y', stroke: 'boundary', curve: 'step-after', strokeWidth: 1.6 })],
    },
  });
  return { svg };
}

export function sessionChart(profile: StoredProfile, id: string): { svg: string } | null {
  if (profile.sessions.length === 0) return null;
  const mean = profile.throughput?.mean ?? null;
  const rows = profile.sessions.map((s) => ({ session: s.index + 1, sps: s.throughput_sps, tip: `session ${s.index + 1}: ${fmtNum(s.throughput_sps)} samples/s (${s.batches} batches)` }));
  const svg = renderChart({
    id,
    title: 'Throughput per session',
    rows: rows.length,
    description:
      `Throughput of each of the ${rows.length} measured sessions: ${rows.map((r) => r.tip).join('; ')}.` +
      (mean !== null ? ` Mean ${fmtNum(mean)} samples/s (grey rule).` : ''),
    plot: {
      height: 240,
      x: { label: 'Session →', ticks: rows.map((r) => r.session), tickFormat: (v: number) => String(v), domain: [0.5, rows.length + 0.5] },
      y: { label: '↑ Throughput (samples/s)', zero: true, grid: true },
      marks: [
        ...(mean !== null ? [Plot.ruleY([mean], { stroke: '#9498a0', strokeDasharray: '4,3' })] : []),
        Plot.line(rows, { x: 'session', y: 'sps', stroke: '#4269d0' }),
        Plot.dot(rows, { x: 'session', y: 'sps', fill: '#4269d0', r: 4, title: 'tip' }),
      ],
    },
  });
  return { svg };
}

export const TOP_LAYERS = 12;

export function layerChart(profile: StoredProfile, id: string): string | null {
  const top = [...profile.layers].sort((a, b) => b.share - a.share).slice(0, TOP_LAYERS);
  if (top.length === 0) return null;
  return barChart({
    id,
    title: `Top ${top.length} layers by share of time`,
    description: `Share of per-batch time spent in each layer, largest first: ${top.map((l) => `${l.name} (${l.op_type}) ${fmtPct(l.share)}`).join('; ')}.`,
    bars: top.map((l) => ({ label: `${l.name} (${l.op_type})`, value: l.share, text: fmtPct(l.share) })),
    x: { label: 'Share of layer time (%)', percent: true },
  });
}

export function opTypeShares(profile: StoredProfile): { op: string; share: number; layers: number }[] {
  const byOp = new Map<string, { share: number; layers: number }>();
  for (const l of profile.layers) {
    const seen = byOp.get(l.op_type) ?? { share: 0, layers: 0 };
    byOp.set(l.op_type, { share: seen.share + l.share, layers: seen.layers + 1 });
  }
  return [...byOp.entries()].map(([op, v]) => ({ op, ...v })).sort((a, b) => b.share - a.share);
}

export function flopsChart(profile: StoredProfile, id: string): string | null {
  const achieved = profile.achieved_flops;
  const peak = profile.system.peak_flops;
  if (achieved === null || peak === null) return null;
  return barChart({
    id,
    title: 'Achieved vs peak FLOP/s',
    description: `The model ran at ${fmtFlops(achieved)}, ${fmtPct(profile.peak_fraction, 2)} of the hardware's theoretical peak of ${fmtFlops(peak)}.`,
    bars: [
      { label: 'achieved', value: achieved / 1e9, text: fmtFlops(achieved), color: '#4269d0' },
      { label: 'theoretical peak', value: peak / 1e9, text: fmtFlops(peak), color: '#9498a0' },
    ],
    x: { label: 'GFLOP/s' },
  });
}
