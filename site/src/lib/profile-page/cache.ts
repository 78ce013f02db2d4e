import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { ProfileEntry, SiteData } from '../data.js';
import { runConfigHref } from '../run-configs.js';

/**
 * Profile pages (and each Profile's JSON download) kept across builds. A Profile never changes once measured, and at
 * 10,000 Profiles their pages and downloads were most of a rebuild's time; so a rebuild renders only those whose
 * inputs changed and links the rest in. A page's key hashes everything it is made from: the site's code
 * (PBH_SITE_PAGE_CODE, which the build integration hashes from the site's sources, core's built code and the versions
 * of Astro, Plot and linkedom), the Profile as read (every field, its raw samples), its run-config link, and the folder
 * local paths are shown relative to. Profile pages carry no build-wide facts (their footer has no build date or
 * counts), so a kept page is the page this build would render. `PBH_SITE_PAGE_CACHE` names the folder (default:
 * node_modules/.cache/pbh-site-pages in the site package); `off` renders every page every time.
 */
export function pageCacheFolder(): string | null {
  const setting = process.env.PBH_SITE_PAGE_CACHE;
  if (setting === 'off') return null;
  return path.resolve(setting ?? path.join(process.cwd(), 'node_modules', '.cache', 'pbh-site-pages'));
}

export interface KeptFiles {
  slug: string;
  key: string;
  /** The page (`<key>.html`) is kept from an earlier build: copied in, not rendered. */
  pageKept: boolean;
  /** The Profile's JSON download (`<key>.json.gz`) is kept: copied in, not written again. */
  downloadKept: boolean;
}

export interface ProfilePagePlan {
  folder: string;
  /**
   * What is kept for `entry`, its key hashed on the first ask: the build's first pages go to the page pool while the
   * main thread hashes the next Profiles' keys (all of them first held every thread idle for two seconds at 10,000).
   */
  keptFor(entry: ProfileEntry): KeptFiles;
  /** Every key asked for so far: once the pages are written, the files this build uses. */
  keys(): string[];
}

/** The plan made for this build's read (siteData() gives one read per build). */
let made: { data: SiteData; plan: ProfilePagePlan | null } | undefined;

function bytes(column: ArrayLike<number>): Uint8Array {
  if (ArrayBuffer.isView(column)) return new Uint8Array(column.buffer, column.byteOffset, column.byteLength);
  return new Uint8Array(Float64Array.from(column).buffer);
}

/**
 * The Profile as its page sees it: without the fields that change when other Profiles are stored (its rank moves
 * whenever a run adds Profiles to its group), so a page is the same whoever else is in the database. The Profile
 * route renders from this, and the key hashes this: a page cannot show what its key leaves out.
 */
export function pageInputs(entry: ProfileEntry): ProfileEntry {
  return { ...entry, rank_in_group: null };
}

/** What a Profile page (and its JSON download, made from a part of the same) is made from, hashed. */
export function profilePageKey(code: string, entry: ProfileEntry, runConfig: string): string {
  const { samples, ...rest } = pageInputs(entry);
  const hash = createHash('sha256').update(code).update('\0').update(runConfig).update('\0');
  hash.update(process.env.PBH_SITE_REPO ?? '').update('\0').update(process.cwd()).update('\0');
  hash.update(JSON.stringify(rest));
  for (const column of [samples.session, samples.batch, samples.ns]) hash.update(bytes(column));
  hash.update(samples.boundary.join('\n'));
  return hash.digest('hex');
}

function makePlan(data: SiteData): ProfilePagePlan | null {
  const folder = pageCacheFolder();
  const code = process.env.PBH_SITE_PAGE_CODE;
  if (folder === null || !code) return null;
  let present: Set<string>;
  try {
    present = new Set(readdirSync(folder));
  } catch {
    // No cache yet: everything is rendered.
    present = new Set();
  }
  const bySlug = new Map<string, KeptFiles>();
  return {
    folder,
    keptFor(entry) {
      let files = bySlug.get(entry.slug);
      if (!files) {
        const key = profilePageKey(code, entry, runConfigHref(data, entry));
        files = { slug: entry.slug, key, pageKept: present.has(`${key}.html`), downloadKept: present.has(`${key}.json.gz`) };
        bySlug.set(entry.slug, files);
      }
      return files;
    },
    keys: () => [...bySlug.values()].map((f) => f.key),
  };
}

/**
 * What is kept for each Profile, once per build: integrations/profile-pages.ts links the kept pages and downloads in,
 * renders the rest and keeps them, then prunes what the build did not use. Null without a folder or the
 * code hash (a build without the integration): every page is rendered, nothing is kept.
 */
export function planProfilePages(data: SiteData): ProfilePagePlan | null {
  if (made?.data !== data) made = { data, plan: makePlan(data) };
  return made.plan;
}

/** This build's plan, once made; null when nothing is kept. */
export function profilePagePlan(): ProfilePagePlan | null {
  return made?.plan ?? null;
}
