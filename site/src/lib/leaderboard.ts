import { ScenarioResultSchema } from '@pbh/core';
import type { ProfileEntry } from './data.js';

/** Rows per leaderboard page: keeps a page under 300 KB however many Profiles the database holds (about 500 B a row). */
export const LEADERBOARD_PAGE_SIZE = 500;

/**
 * Whether a Profile is ranked: it measured (status ok) and its run meets LoadGen's rules for its scenario (verdict
 * VALID; a Profile without a verdict, stored before scenarios were judged, counts as VALID). An INVALID one is set
 * apart with its reason, as MLPerf's results tables keep invalid runs out of the ranking.
 */
export const isRanked = (p: Pick<ProfileEntry, 'status' | 'validity'>): boolean => p.status === 'ok' && p.validity !== 'INVALID';

/** The three parts of a Profile table, in this order: ranked, measured but INVALID, and no result. */
export type RowKind = 'ranked' | 'invalid' | 'failed';
export const rowKind = (p: Pick<ProfileEntry, 'status' | 'validity'>): RowKind => (p.status !== 'ok' ? 'failed' : isRanked(p) ? 'ranked' : 'invalid');

/**
 * Ranked Profiles first, by model, batch size, scenario, hardware, then throughput (fastest first, whatever its
 * precision: one answer per model and batch, the precisions compared inside the group); INVALID ones after them by
 * model, hardware, engine entry; then the rest, unranked, by model, engine entry, newest first. Nothing is dropped.
 */
export function leaderboardOrder(profiles: readonly ProfileEntry[]): ProfileEntry[] {
  // LoadGen's order (single stream, multi stream, server, offline), not the alphabet's.
  const scenarios: readonly string[] = ScenarioResultSchema.shape.kind.options;
  // One collator for the whole sort: localeCompare builds one per call, which was most of a 10,000-row sort.
  const { compare } = new Intl.Collator();
  const ranked = profiles
    .filter((p) => rowKind(p) === 'ranked')
    .sort(
      (a, b) =>
        compare(a.model_name, b.model_name) ||
        a.batch_size - b.batch_size ||
        scenarios.indexOf(a.scenario) - scenarios.indexOf(b.scenario) ||
        compare(a.hardware, b.hardware) ||
        (b.throughput_mean ?? -Infinity) - (a.throughput_mean ?? -Infinity) ||
        compare(a.engine_entry, b.engine_entry),
    );
  const invalid = profiles
    .filter((p) => rowKind(p) === 'invalid')
    .sort((a, b) => compare(a.model_name, b.model_name) || compare(a.hardware, b.hardware) || a.batch_size - b.batch_size || compare(a.engine_entry, b.engine_entry));
  const failed = profiles
    .filter((p) => rowKind(p) === 'failed')
    .sort(
      (a, b) =>
        compare(a.model_name, b.model_name) ||
        compare(a.hardware, b.hardware) ||
        compare(a.engine_entry, b.engine_entry) ||
        compare(b.created_at, a.created_at),
    );
  return [...ranked, ...invalid, ...failed];
}

/**
 * Consecutive rows of one group: ranked rows of one model, batch size, scenario and hardware (precisions side by
 * side, ranked together by throughput), or the INVALID rows of one model and hardware, or the rows without a result
 * of one model and hardware. The table shows the group's shared facts once, in its heading row.
 */
export interface RowGroup {
  kind: RowKind;
  /** kind === 'ranked', kept for readers that only ask whether a group is ranked. */
  ranked: boolean;
  model: string;
  batch: number | null;
  scenario: string | null;
  hardware: string;
  rows: ProfileEntry[];
}

const groupKey = (p: ProfileEntry): string => {
  const kind = rowKind(p);
  return kind === 'ranked' ? [kind, p.model_name, p.batch_size, p.scenario, p.hardware].join('\u0000') : [kind, p.model_name, p.hardware].join('\u0000');
};

/** Rows already in leaderboardOrder, cut where the group changes. */
export function rowGroups(ordered: ProfileEntry[]): RowGroup[] {
  const groups: RowGroup[] = [];
  let last = '';
  for (const p of ordered) {
    const key = groupKey(p);
    if (key !== last || groups.length === 0) {
      const kind = rowKind(p);
      const ranked = kind === 'ranked';
      groups.push({ kind, ranked, model: p.model_name, batch: ranked ? p.batch_size : null, scenario: ranked ? p.scenario : null, hardware: p.hardware, rows: [] });
      last = key;
    }
    groups[groups.length - 1]!.rows.push(p);
  }
  return groups;
}

const paged = new WeakMap<readonly ProfileEntry[], readonly ProfileEntry[][]>();

/** The leaderboard cut into pages, once per list of Profiles: every leaderboard page asks for the same build's. */
export function leaderboardPages(profiles: readonly ProfileEntry[]): readonly ProfileEntry[][] {
  let pages = paged.get(profiles);
  if (!pages) {
    const ordered = leaderboardOrder(profiles);
    const cut: ProfileEntry[][] = [];
    for (let i = 0; i < ordered.length; i += LEADERBOARD_PAGE_SIZE) cut.push(ordered.slice(i, i + LEADERBOARD_PAGE_SIZE));
    pages = cut.length > 0 ? cut : [[]];
    paged.set(profiles, pages);
  }
  return pages;
}

/** Page 1 is index.html; page n > 1 is leaderboard/n.html. */
export function leaderboardHref(root: string, page: number): string {
  return page === 1 ? `${root}index.html` : `${root}leaderboard/${page}.html`;
}
