import { ChangePointError, detectChanges, type Change } from '@pbh/core';
import type { ProfileEntry } from './data.js';
import { detectableChange, welchTTest, type Detectable } from './welch.js';

/** A change is flagged when Welch's t-test gives p below this AND the relative change exceeds CHANGE_MIN. */
export const CHANGE_P = 0.01;
export const CHANGE_MIN = 0.02;

export interface HistoryPoint {
  profile: ProfileEntry;
  /** Throughput of an ok Profile; null for a failed, timed-out, skipped or invalid-output one. */
  mean: number | null;
  std: number | null;
  sessions: number[];
  /** Against the previous point of the same series; null for the first point. */
  change: null | {
    /** ok → failed (or back): always a flagged change, whatever the throughput did. */
    status: { from: ProfileEntry['status']; to: ProfileEntry['status'] } | null;
    relative: number | null;
    t: number | null;
    df: number | null;
    p: number | null;
    /** What the test could see between these two points: the relative change it flags at p < CHANGE_P. */
    detectable: Detectable | null;
    flagged: boolean;
  };
}

/** How a series reads: nothing to compare yet, compared with no change, or compared with flagged changes. */
export type HistoryVerdict = 'one point' | 'no change' | 'changed';

export interface HistorySeries {
  key: string;
  slug: string;
  model: string;
  engine: string;
  /** The engine entry: its label, else the engine name. */
  entry: string;
  scenario: ProfileEntry['scenario'];
  device: string;
  batchSize: number;
  hardware: string;
  points: HistoryPoint[];
  flagged: number;
  statusChanges: number;
  verdict: HistoryVerdict;
  /** With one point: the change the next run (same sessions, same spread) would have to show to be flagged. */
  nextDetectable: Detectable | null;
}

function comparePoint(previous: HistoryPoint, current: HistoryPoint): HistoryPoint['change'] {
  const was = previous.profile.status;
  const now = current.profile.status;
  const status = (was === 'ok') !== (now === 'ok') ? { from: was, to: now } : null;
  if (previous.mean === null || current.mean === null) {
    return { status, relative: null, t: null, df: null, p: null, detectable: null, flagged: status !== null };
  }
  const relative = previous.mean === 0 ? 0 : (current.mean - previous.mean) / previous.mean;
  const test = welchTTest(previous.sessions, current.sessions);
  return {
    status,
    relative,
    t: test?.t ?? null,
    df: test?.df ?? null,
    p: test?.p ?? null,
    detectable: detectableChange(previous.sessions, current.sessions, CHANGE_P),
    flagged: status !== null || (test !== null && test.p < CHANGE_P && Math.abs(relative) > CHANGE_MIN),
  };
}

const baseKey = (p: ProfileEntry): string =>
  [p.model_name, p.engine_entry, p.scenario, p.engine_device, p.batch_size, p.hardware].join('\u0000');

/**
 * Which series each Profile belongs to. A Profile that never ran has no executed precision, so its own series key says
 * "precision unknown": it joins the one series of its cell that did run, when there is exactly one, so ok → failed
 * shows as a change of that series instead of a separate series of failures.
 */
function assignSeries(profiles: readonly ProfileEntry[]): Map<string, ProfileEntry[]> {
  const series = new Map<string, ProfileEntry[]>();
  const byBase = new Map<string, Set<string>>();
  for (const p of profiles) {
    if (p.precisionLabel === null) continue;
    const base = baseKey(p);
    const keys = byBase.get(base);
    if (keys) keys.add(p.seriesKey);
    else byBase.set(base, new Set([p.seriesKey]));
  }
  for (const p of profiles) {
    const candidates = p.precisionLabel === null ? byBase.get(baseKey(p)) : undefined;
    const key = candidates?.size === 1 ? [...candidates][0]! : p.seriesKey;
    // Pushed in place: copying the series per Profile made a long history quadratic.
    const members = series.get(key);
    if (members) members.push(p);
    else series.set(key, [p]);
  }
  return series;
}

function verdictOf(points: HistoryPoint[]): HistoryVerdict {
  if (points.length < 2) return 'one point';
  return points.some((pt) => pt.change?.flagged) ? 'changed' : 'no change';
}

const built = new WeakMap<readonly ProfileEntry[], readonly HistorySeries[]>();

/**
 * Every History series over time, every status included, oldest first, each point tested against the one before.
 * Built once per list of Profiles: the History page, each series' page and the downloads all ask for the same build's.
 */
export function buildHistory(profiles: readonly ProfileEntry[]): readonly HistorySeries[] {
  let series = built.get(profiles);
  if (!series) {
    series = seriesOf(profiles);
    built.set(profiles, series);
  }
  return series;
}

function seriesOf(profiles: readonly ProfileEntry[]): HistorySeries[] {
  return [...assignSeries(profiles).entries()]
    .map(([key, members]) => {
      const sorted = [...members].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.profile_id.localeCompare(b.profile_id));
      const points: HistoryPoint[] = [];
      for (const profile of sorted) {
        const ok = profile.status === 'ok' && profile.throughput_mean !== null;
        const point: HistoryPoint = {
          profile,
          mean: ok ? profile.throughput_mean : null,
          std: ok ? profile.throughput_std : null,
          sessions: ok ? profile.session_throughputs : [],
          change: null,
        };
        const previous = points[points.length - 1];
        if (previous) point.change = comparePoint(previous, point);
        points.push(point);
      }
      const first = sorted.find((p) => p.seriesKey === key) ?? sorted[0]!;
      const last = points[points.length - 1]!;
      return {
        key,
        slug: first.seriesSlug,
        model: first.model_name,
        engine: first.engine_name,
        entry: first.engine_entry,
        scenario: first.scenario,
        device: first.engine_device,
        batchSize: first.batch_size,
        hardware: first.hardware,
        points,
        flagged: points.filter((p) => p.change?.flagged).length,
        statusChanges: points.filter((p) => p.change?.status).length,
        verdict: verdictOf(points),
        nextDetectable: points.length === 1 ? detectableChange(last.sessions, last.sessions, CHANGE_P) : null,
      };
    })
    .sort((a, b) => a.model.localeCompare(b.model) || a.entry.localeCompare(b.entry) || a.batchSize - b.batchSize || a.key.localeCompare(b.key));
}

/** A change point of a History series, read back onto its points (ruptures' PELT via core, or a status change). */
export interface SeriesStep {
  series: HistorySeries;
  change: Change;
  /** The first point after the change and the last before it. */
  at: HistoryPoint;
  before: HistoryPoint;
}

export interface HistorySteps {
  /** "ruptures 1.1.10, PELT, l2 cost", or null when detection could not run. */
  method: string | null;
  /** Why there are no change points (no venv, ruptures missing): shown on the History page instead of "none". */
  unavailable: string | null;
  bySeries: Map<HistorySeries, SeriesStep[]>;
  /** Every series' change points, the latest first. */
  latest: SeriesStep[];
}

const stepsBuilt = new WeakMap<readonly ProfileEntry[], Promise<HistorySteps>>();

/**
 * Change points of every History series, computed once per build in one Python process (core's detectChanges). Where
 * the venv cannot run them, the build goes on and the pages say why, with the fix.
 */
export function historySteps(profiles: readonly ProfileEntry[]): Promise<HistorySteps> {
  let steps = stepsBuilt.get(profiles);
  if (!steps) {
    steps = stepsOf(buildHistory(profiles));
    stepsBuilt.set(profiles, steps);
  }
  return steps;
}

async function stepsOf(series: readonly HistorySeries[]): Promise<HistorySteps> {
  const bySeries = new Map<HistorySeries, SeriesStep[]>(series.map((s) => [s, []]));
  let detection;
  try {
    detection = await detectChanges(
      series.map((s) => ({ id: s.key, points: s.points.map((pt) => ({ status: pt.profile.status, throughput: pt.mean, sessions: pt.sessions })) })),
    );
  } catch (error) {
    if (!(error instanceof ChangePointError)) throw error;
    process.stderr.write(`pbh site: History has no change points: ${error.message}\n`);
    return { method: null, unavailable: error.message.split('\n')[0]!, bySeries, latest: [] };
  }
  for (const s of series) {
    const found = detection.series.get(s.key)?.changes ?? [];
    bySeries.set(s, found.map((change) => ({ series: s, change, at: s.points[change.index]!, before: s.points[change.previous]! })));
  }
  const latest = [...bySeries.values()].flat().sort((a, b) => b.at.profile.created_at.localeCompare(a.at.profile.created_at) || a.series.key.localeCompare(b.series.key));
  return { method: detection.method, unavailable: null, bySeries, latest };
}
