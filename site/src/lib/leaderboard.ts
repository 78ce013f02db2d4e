import { ScenarioResultSchema } from '@pbh/core';
import type { ProfileEntry } from './data.js';

/** Rows per leaderboard page: keeps a page under 300 KB however many Profiles the database holds (about 500 B a row). */
export const LEADERBOARD_PAGE_SIZE = 500;

/**
 * ok Profiles first, by model, batch size, scenario, precision, hardware, then rank (ranks count within that group, as
 * the leaderboard view's rank_in_group does); the rest after them,
 * unranked, by model, engine entry, newest first. Nothing is dropped.
 */
export function leaderboardOrder(profiles: readonly ProfileEntry[]): ProfileEntry[] {
  // LoadGen's order (single stream, multi stream, server, offline), not the alphabet's.
  const scenarios: readonly string[] = ScenarioResultSchema.shape.kind.options;
  // One collator for the whole sort: localeCompare builds one per call, which was most of a 10,000-row sort.
  const { compare } = new Intl.Collator();
  const ok = profiles
    .filter((p) => p.status === 'ok')
    .sort(
      (a, b) =>
        compare(a.model_name, b.model_name) ||
        a.batch_size - b.batch_size ||
        scenarios.indexOf(a.scenario) - scenarios.indexOf(b.scenario) ||
        compare(a.precision ?? '', b.precision ?? '') ||
        compare(a.hardware, b.hardware) ||
        (a.rank_in_group ?? 0) - (b.rank_in_group ?? 0),
    );
  const notOk = profiles
    .filter((p) => p.status !== 'ok')
    .sort(
      (a, b) =>
        compare(a.model_name, b.model_name) ||
        compare(a.hardware, b.hardware) ||
        compare(a.engine_entry, b.engine_entry) ||
        compare(b.created_at, a.created_at),
    );
  return [...ok, ...notOk];
}

/**
 * Consecutive rows of one ranking group: ok rows of one model, batch size, scenario, executed precision and hardware
 * (what rank_in_group counts within), or the unranked rows of one model and hardware. The table shows the group's
 * shared facts once, in its heading row.
 */
export interface RowGroup {
  ranked: boolean;
  model: string;
  batch: number | null;
  scenario: string | null;
  precision: string | null;
  hardware: string;
  rows: ProfileEntry[];
}

const groupKey = (p: ProfileEntry): string =>
  p.status === 'ok'
    ? ['ok', p.model_name, p.batch_size, p.scenario, p.precision ?? '', p.hardware].join('\u0000')
    : ['x', p.model_name, p.hardware].join('\u0000');

/** Rows already in leaderboardOrder, cut where the group changes. */
export function rowGroups(ordered: ProfileEntry[]): RowGroup[] {
  const groups: RowGroup[] = [];
  let last = '';
  for (const p of ordered) {
    const key = groupKey(p);
    if (key !== last || groups.length === 0) {
      const ranked = p.status === 'ok';
      groups.push({
        ranked,
        model: p.model_name,
        batch: ranked ? p.batch_size : null,
        scenario: ranked ? p.scenario : null,
        precision: ranked ? p.precision : null,
        hardware: p.hardware,
        rows: [],
      });
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
