import type { Boundary, SampleColumns, ScenarioResult, StoredProfile } from '@pbh/core';
import { barChart } from '../charts/bar-chart.js';
import { colorAt } from '../charts/svg.js';
import { xyChart } from '../charts/xy-chart.js';
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

function ecdfPoints(sortedMs: number[]): { x: number; y: number }[] {
  const n = sortedMs.length;
  if (n <= ECDF_POINTS) return sortedMs.map((x, i) => ({ x, y: (i + 1) / n }));
  const points: { x: number; y: number }[] = [];
  for (let k = 1; k <= ECDF_POINTS; k++) {
    const i = Math.min(n - 1, Math.ceil((k / ECDF_POINTS) * n) - 1);
    points.push({ x: sortedMs[i]!, y: (i + 1) / n });
  }
  return points;
}

export function latencyEcdf(samples: SampleColumns, id: string): { svg: string; legend: { name: string; color: string }[] } | null {
  if (samples.ns.length === 0) return null;
  const byBoundary = new Map<Boundary, number[]>();
  samples.boundary.forEach((b, i) => byBoundary.set(b, [...(byBoundary.get(b) ?? []), samples.ns[i]! / 1e6]));
  const series = BOUNDARIES.filter((b) => byBoundary.has(b.key)).map((b) => {
    const sorted = [...(byBoundary.get(b.key) ?? [])].sort((x, y) => x - y);
    return { name: `${b.label} (n=${sorted.length})`, points: ecdfPoints(sorted), mark: 'step' as const, color: colorAt(BOUNDARIES.indexOf(b)) };
  });
  const all = series.flatMap((s) => s.points.map((p) => p.x));
  const log = Math.max(...all) / Math.max(1e-9, Math.min(...all)) > 30;
  const svg = xyChart({
    id,
    title: 'Latency distribution per batch (ECDF)',
    description:
      `Empirical cumulative distribution of per-batch latency for ${series.map((s) => s.name).join(', ')}. ` +
      `For each latency on the x axis, the y value is the fraction of batches that took at most that long.`,
    x: { label: `Latency per batch (ms${log ? ', log scale' : ''})`, log },
    y: { label: 'Fraction of batches', min: 0, max: 1, percent: true },
    series,
  });
  return { svg, legend: series.map((s) => ({ name: s.name, color: s.color })) };
}

export function sessionChart(profile: StoredProfile, id: string): { svg: string; legend: { name: string; color: string }[] } | null {
  if (profile.sessions.length === 0) return null;
  const mean = profile.throughput?.mean ?? null;
  const points = profile.sessions.map((s) => ({ x: s.index + 1, y: s.throughput_sps, note: `${s.batches} batches` }));
  const svg = xyChart({
    id,
    title: 'Throughput per session',
    description:
      `Throughput of each of the ${points.length} measured sessions: ${points.map((p) => `session ${p.x}: ${fmtNum(p.y)} samples/s`).join('; ')}.` +
      (mean !== null ? ` Mean ${fmtNum(mean)} samples/s.` : ''),
    x: { label: 'Session', ticks: points.map((p) => p.x), min: 0.5, max: points.length + 0.5 },
    y: { label: 'Throughput (samples/s)', zero: true },
    series: [
      { name: 'session throughput', points, mark: 'linedots', color: colorAt(0) },
      ...(mean !== null ? [{ name: 'mean over sessions', points: points.map((p) => ({ x: p.x, y: mean })), mark: 'line' as const, color: '#9498a0' }] : []),
    ],
    height: 240,
  });
  return {
    svg,
    legend: [{ name: 'session throughput', color: colorAt(0) }, ...(mean !== null ? [{ name: 'mean over sessions', color: '#9498a0' }] : [])],
  };
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
      { label: 'achieved', value: achieved / 1e9, text: fmtFlops(achieved), color: colorAt(0) },
      { label: 'theoretical peak', value: peak / 1e9, text: fmtFlops(peak), color: colorAt(9) },
    ],
    x: { label: 'GFLOP/s' },
    labelWidth: 120,
  });
}
