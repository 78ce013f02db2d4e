import type { ProfileEntry } from './data.js';
import { paretoFront as front } from './pareto.js';

/**
 * Comparisons use each cell's CURRENT result: the latest ok Profile per (model, engine entry, precision, scenario,
 * device, batch size, hardware), the History series. Older runs stay on the History page.
 */
export function currentProfiles(profiles: ProfileEntry[]): ProfileEntry[] {
  const latest = new Map<string, ProfileEntry>();
  for (const p of profiles) {
    if (p.status !== 'ok' || p.throughput_mean === null) continue;
    const seen = latest.get(p.seriesKey);
    if (!seen || p.created_at > seen.created_at || (p.created_at === seen.created_at && p.profile_id > seen.profile_id)) latest.set(p.seriesKey, p);
  }
  return [...latest.values()];
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return new Map([...groups.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * The series each Profile belongs to in a comparison: its engine entry (the label where the config gave one, so two
 * entries of one engine with different options are two lines), with the precision where these Profiles hold that
 * entry at more than one (precision is part of the cell: openvino at fp32 and at bf16 are two lines, not one).
 */
export function engineSeries<P extends Pick<ProfileEntry, 'engine_entry' | 'precisionLabel'>>(profiles: readonly P[]): (p: P) => string {
  const precisions = new Map<string, Set<string | null>>();
  for (const p of profiles) precisions.set(p.engine_entry, (precisions.get(p.engine_entry) ?? new Set()).add(p.precisionLabel));
  return (p) => ((precisions.get(p.engine_entry)?.size ?? 0) > 1 ? `${p.engine_entry} ${p.precisionLabel ?? 'precision unknown'}` : p.engine_entry);
}

export interface SpeedupMatrix {
  model: string;
  modelSlug: string;
  scenario: ProfileEntry['scenario'];
  device: string;
  batchSize: number;
  hardware: string;
  engines: { name: string; throughput: number; profile: ProfileEntry }[];
}

/**
 * Per model, scenario, device, batch size and hardware (a server's throughput is its offered load, never comparable
 * with a stream's, so scenarios are compared apart, as the comparisons view partitions them): every engine entry's
 * (and precision's) throughput; cell (row, column) = row / column.
 */
export function speedupMatrices(current: ProfileEntry[]): SpeedupMatrix[] {
  const groups = groupBy(current, (p) =>
    [p.model_name, p.scenario, p.engine_device, String(p.batch_size).padStart(6, '0'), p.hardware].join('\u0000'),
  );
  return [...groups.values()].map((members) => {
    const first = members[0]!;
    const series = engineSeries(members);
    return {
      model: first.model_name,
      modelSlug: first.modelSlug,
      scenario: first.scenario,
      device: first.engine_device,
      batchSize: first.batch_size,
      hardware: first.hardware,
      engines: members
        .map((p) => ({ name: series(p), throughput: p.throughput_mean ?? 0, profile: p }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  });
}

/** Groups where the comparison means something: same dataset, scenario, device and hardware across models. */
export function byDataset(current: ProfileEntry[]): Map<string, ProfileEntry[]> {
  return groupBy(current, (p) => `${p.dataset_name} · ${p.scenario} · ${p.engine_device} · ${p.hardware}`);
}

export function byModel(current: ProfileEntry[]): Map<string, ProfileEntry[]> {
  return groupBy(current, (p) => `${p.model_name} · ${p.scenario} · ${p.engine_device} · ${p.hardware}`);
}

/**
 * Accuracy-vs-throughput Pareto front: the Profiles no other Profile beats on both (higher
 * throughput and higher accuracy), sorted by throughput.
 */
export function paretoFront(profiles: ProfileEntry[]): ProfileEntry[] {
  const scored = profiles.filter((p) => p.accuracy !== null && p.throughput_mean !== null);
  return front(scored, (p) => p.throughput_mean!, (p) => p.accuracy!);
}
