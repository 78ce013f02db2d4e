import { fmtDate } from './format.js';
import { html, type Html } from './html.js';

export type NavKey = 'leaderboard' | 'models' | 'engines' | 'comparisons' | 'sparsity' | 'history' | 'runs' | 'machines' | 'reproduce' | 'glossary' | 'sql';

const LINKS: readonly (readonly [NavKey, string, string])[] = [
  ['leaderboard', 'index.html', 'Leaderboard'],
  ['models', 'models.html', 'Models'],
  ['engines', 'engines.html', 'Engines'],
  ['comparisons', 'comparisons.html', 'Comparisons'],
  ['sparsity', 'sparsity.html', 'Compression study'],
  ['history', 'history.html', 'History'],
  ['runs', 'runs.html', 'Runs'],
  ['machines', 'machines.html', 'Machines'],
  ['reproduce', 'reproduce.html', 'Reproduce'],
  ['glossary', 'glossary.html', 'Glossary'],
  ['sql', 'sql.html', 'SQL console'],
];

/** What a page's footer says about the build that made it; Profile pages carry none (they are kept across builds). */
export interface BuildStamp {
  dbFile: string;
  builtAt: string;
  profiles: number;
  runs: number;
}

export interface LayoutOptions {
  title: string;
  /** Folders between the site root and this page: links are relative so the site works from any folder. */
  depth: number;
  nav?: NavKey | undefined;
  stamp: BuildStamp | null;
}

/**
 * Every page's frame as strings, before and after its <main> content: Layout.astro puts its slot between them, and
 * Profile pages, rendered outside Astro on the build's worker threads (lib/profile-page/page.ts), put theirs.
 */
export function layoutParts({ title, depth, nav, stamp }: LayoutOptions): { start: Html; end: Html } {
  const root = '../'.repeat(depth);
  const links = LINKS.map(([key, href, text]) => html`<a href="${root}${href}"${nav === key && html` aria-current="page"`}>${text}</a>`);
  const start = html`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · PBH results</title><link rel="stylesheet" href="${root}site.css"><link rel="icon" href="${root}favicon.svg" type="image/svg+xml"></head><body><header><nav aria-label="Site"><a class="brand" href="${root}index.html">PBH results</a> ${links}</nav></header><main>`;
  const stamped = stamp && html`Built from <code>${stamp.dbFile}</code> on ${fmtDate(stamp.builtAt)}: ${stamp.profiles} Profiles, ${stamp.runs} runs · `;
  const end = html`</main><footer>${stamped}<a href="${root}sql.html#parquet">the database as Parquet</a> · PBH, the Performance Benchmark Harness</footer></body></html>`;
  return { start, end };
}
