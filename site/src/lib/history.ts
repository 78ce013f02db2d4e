import type { ProfileEntry } from './data.js';
import { welchTTest } from './welch.js';

/** A change is flagged when Welch's t-test gives p below this AND the relative change exceeds CHANGE_MIN. */
export const CHANGE_P = 0.01;
export const CHANGE_MIN = 0.02;

export interface HistoryPoint {
  profile: ProfileEntry;
  mean: number;
  std: number | null;
  sessions: number[];
  /** Against the previous point of the same series; null for the first point. */
  change: null | {
    relative: number;
    t: number | null;
    df: number | null;
    p: number | null;
    flagged: boolean;
  };
}

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
}

function comparePoint(previous: HistoryPoint, current: HistoryPoint): HistoryPoint['change'] {
  const relative = previous.mean === 0 ? 0 : (current.mean - previous.mean) / previous.mean;
  const test = welchTTest(previous.sessions, current.sessions);
  return {
    relative,
    t: test?.t ?? null,
    df: test?.df ?? null,
    p: test?.p ?? null,
    flagged: test !== null && test.p < CHANGE_P && Math.abs(relative) > CHANGE_MIN,
  };
}

/** Every History series (data.ts seriesKey) over time: ok Profiles, oldest first, each tested against the one before. */
export function buildHistory(profiles: ProfileEntry[]): HistorySeries[] {
  const series = new Map<string, ProfileEntry[]>();
  for (const p of profiles) {
    if (p.status !== 'ok' || p.throughput_mean === null) continue;
    series.set(p.seriesKey, [...(series.get(p.seriesKey) ?? []), p]);
  }
  return [...series.values()]
    .map((members) => {
      const sorted = [...members].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.profile_id.localeCompare(b.profile_id));
      const points: HistoryPoint[] = [];
      for (const profile of sorted) {
        const sessions = profile.session_throughputs;
        const point: HistoryPoint = { profile, mean: profile.throughput_mean ?? 0, std: profile.throughput_std, sessions, change: null };
        const previous = points[points.length - 1];
        if (previous) point.change = comparePoint(previous, point);
        points.push(point);
      }
      const first = sorted[0]!;
      return {
        key: first.seriesKey,
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
      };
    })
    .sort((a, b) => a.model.localeCompare(b.model) || a.entry.localeCompare(b.entry) || a.batchSize - b.batchSize || a.key.localeCompare(b.key));
}
