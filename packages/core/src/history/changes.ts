import type { ProfileStatus } from '../contracts/profile.js';
import { ratioInterval } from '../stats/welch.js';
import { detectBreaks, type Detection } from './detect.js';

/** What change detection needs of a point; the caller keeps its own records and reads changes back by index. */
export interface SeriesPoint {
  status: ProfileStatus;
  /** The ranked figure of an ok Profile; null for any other. */
  throughput: number | null;
  /** Per-session throughputs (their spread is the least noise assumed between points). */
  sessions: readonly number[];
}

export interface SeriesInput {
  id: string;
  /** Oldest first, every status. */
  points: readonly SeriesPoint[];
}

/** A step in the level of the ok points: the first point of the new level, and both levels compared. */
export interface ThroughputChange {
  kind: 'throughput';
  /** Index into the series' points of the first point after the step. */
  index: number;
  /** The point before it (the last of the old level). */
  previous: number;
  /** Indexes of the ok points of the level before and after, each side of the step up to the next step. */
  before: { from: number; to: number; points: number; mean: number };
  after: { from: number; to: number; points: number; mean: number };
  /** mean(after) / mean(before), with its 95% interval from the points' means (core's ratioInterval). */
  ratio: number;
  low: number;
  high: number;
  /** Welch's test of the two levels' point means (log scale, two-sided). */
  p: number;
  direction: 'faster' | 'slower';
}

/** ok → failed, timeout, invalid output or skipped, and back: always a change point. */
export interface StatusChange {
  kind: 'status';
  index: number;
  previous: number;
  from: ProfileStatus;
  to: ProfileStatus;
}

export type Change = ThroughputChange | StatusChange;

export interface SeriesChanges {
  id: string;
  /** In time order. */
  changes: Change[];
  /** The point-to-point noise PELT assumed (throughput units) and the penalty it paid per change. */
  sigma: number | null;
  penalty: number | null;
}

export interface ChangeDetection {
  /** The library and method that placed the steps, e.g. "ruptures 1.1.10, PELT, l2 cost". */
  method: string;
  series: Map<string, SeriesChanges>;
}

const mean = (values: readonly number[]): number => values.reduce((s, v) => s + v, 0) / values.length;

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The standard error of one point's mean from its sessions; the median over points is the noise floor. */
function noiseFloor(points: readonly SeriesPoint[]): number {
  return median(
    points.flatMap((p) => {
      const n = p.sessions.length;
      if (n < 2) return [];
      const m = mean(p.sessions);
      return [Math.sqrt(p.sessions.reduce((s, v) => s + (v - m) ** 2, 0) / (n - 1) / n)];
    }),
  );
}

function statusChanges(points: readonly SeriesPoint[]): StatusChange[] {
  const out: StatusChange[] = [];
  for (let i = 1; i < points.length; i++) {
    const was = points[i - 1]!.status;
    const now = points[i]!.status;
    if ((was === 'ok') !== (now === 'ok')) out.push({ kind: 'status', index: i, previous: i - 1, from: was, to: now });
  }
  return out;
}

function throughputChanges(points: readonly SeriesPoint[], okIndex: readonly number[], breaks: readonly number[]): ThroughputChange[] {
  const bounds = [0, ...breaks, okIndex.length];
  const out: ThroughputChange[] = [];
  for (let k = 1; k < bounds.length - 1; k++) {
    const [from, at, to] = [bounds[k - 1]!, bounds[k]!, bounds[k + 1]!];
    const beforeValues = okIndex.slice(from, at).map((i) => points[i]!.throughput!);
    const afterValues = okIndex.slice(at, to).map((i) => points[i]!.throughput!);
    const interval = ratioInterval(beforeValues, afterValues);
    if (!interval) continue;
    out.push({
      kind: 'throughput',
      index: okIndex[at]!,
      previous: okIndex[at - 1]!,
      before: { from: okIndex[from]!, to: okIndex[at - 1]!, points: beforeValues.length, mean: mean(beforeValues) },
      after: { from: okIndex[at]!, to: okIndex[to - 1]!, points: afterValues.length, mean: mean(afterValues) },
      ratio: interval.ratio,
      low: interval.low,
      high: interval.high,
      p: interval.p,
      direction: interval.ratio >= 1 ? 'faster' : 'slower',
    });
  }
  return out;
}

/**
 * Change points of every series: steps in the ok points' throughput placed by ruptures' PELT (one Python process for
 * all series), each measured against the level before it, plus every ok ↔ not-ok status transition.
 */
export async function detectChanges(series: readonly SeriesInput[]): Promise<ChangeDetection> {
  const okIndexes = new Map(series.map((s) => [s.id, s.points.flatMap((p, i) => (p.status === 'ok' && p.throughput !== null ? [i] : []))]));
  const detection: Detection = await detectBreaks(
    series.map((s) => ({ id: s.id, values: okIndexes.get(s.id)!.map((i) => s.points[i]!.throughput!), floor: noiseFloor(s.points) })),
  );
  const found = new Map(detection.series.map((d) => [d.id, d]));
  const out = new Map<string, SeriesChanges>();
  for (const s of series) {
    const d = found.get(s.id);
    const changes: Change[] = [...throughputChanges(s.points, okIndexes.get(s.id)!, d?.breaks ?? []), ...statusChanges(s.points)];
    changes.sort((a, b) => a.index - b.index || (a.kind === 'status' ? -1 : 1));
    out.set(s.id, { id: s.id, changes, sigma: d?.sigma ?? null, penalty: d?.penalty ?? null });
  }
  return { method: `${detection.library}, ${detection.method}`, series: out };
}
