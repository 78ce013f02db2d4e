import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { siteData, type ProfileEntry } from '../src/lib/data.js';
import { pageInputs, planProfilePages, profilePagePlan } from '../src/lib/profile-page/cache.js';
import { fileAs } from '../src/lib/profile-page/files.js';
import { profileFilesPool } from '../src/lib/profile-page/pool.js';
import { runConfigHref } from '../src/lib/run-configs.js';
import { inFlight } from './file-jobs.js';

/** Packages whose version changes what a page holds (the renderer, the charts, their DOM). */
const RENDERING_PACKAGES = ['astro', '@observablehq/plot', 'linkedom'];

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

/**
 * The hash of everything a Profile page is rendered by: the site's own sources and config, core's built code (the
 * site calls it, and a page may), and the versions of the packages that render it. Any edit misses every kept page
 * (src/lib/profile-page/cache.ts).
 */
export function hashSiteCode(siteDir: string): string {
  const hash = createHash('sha256');
  const require = createRequire(path.join(siteDir, 'package.json'));
  const core = path.dirname(require.resolve('@pbh/core'));
  const files = [
    ...filesUnder(path.join(siteDir, 'src')),
    ...filesUnder(path.join(siteDir, 'integrations')),
    path.join(siteDir, 'astro.config.ts'),
    path.join(siteDir, 'package.json'),
    ...filesUnder(core),
  ];
  for (const file of files) hash.update(path.relative(siteDir, file)).update('\0').update(readFileSync(file)).update('\0');
  for (const name of RENDERING_PACKAGES) hash.update(name).update(packageVersion(require.resolve(name), name));
  return hash.digest('hex');
}

/** The version in the manifest of package `name`, found above its entry point (not every package exports its package.json). */
function packageVersion(entry: string, name: string): string {
  for (let folder = path.dirname(entry); folder !== path.dirname(folder); folder = path.dirname(folder)) {
    try {
      const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === name) return String(manifest.version);
    } catch {
      // No manifest at this level: look one folder up.
    }
  }
  throw new Error(`pbh-assets: no package.json for ${name} above ${entry}; reinstall the site's packages (npm ci).`);
}

/** File operations in flight at once: each runs on libuv's thread pool. */
const FILE_OPS = 16;

/** Profiles in flight at once: their links on libuv's threads, and a few queued for each of the page pool's threads. */
const profilesInFlight = (threads: number): number => Math.max(FILE_OPS, 4 * threads);

/** A column on its own: readSiteData's are mostly views on one column of every sample, which a message would copy whole. */
function own<T extends ArrayLike<number>>(column: T): T {
  return (ArrayBuffer.isView(column) ? (column as unknown as Int32Array | Float64Array).slice() : column) as T;
}

/** The Profile as its page is rendered from (pageInputs), with samples of its own to send to a worker thread. */
function jobEntry(entry: ProfileEntry): ProfileEntry {
  const { session, batch, boundary, ns } = entry.samples;
  return { ...pageInputs(entry), samples: { session: own(session), batch: own(batch), boundary, ns: own(ns) } };
}

/**
 * Every Profile's page into `pagesDir` and its JSON download into `downloadsDir`: a kept one linked in from the page
 * cache, the others rendered and written (then kept) on the page pool's worker threads (src/lib/profile-page/pool.ts),
 * beside the main thread's Vite bundling and Astro pages. Returns how many pages were kept and rendered, and whether
 * there is a page cache.
 */
export async function writeProfilePages(pagesDir: string, downloadsDir: string): Promise<{ kept: number; rendered: number; cached: boolean }> {
  const data = await siteData();
  const plan = planProfilePages(data);
  await mkdir(pagesDir, { recursive: true });
  await mkdir(downloadsDir, { recursive: true });
  if (plan) await mkdir(plan.folder, { recursive: true });
  const pool = profileFilesPool();
  let kept = 0;
  await inFlight(data.profiles, profilesInFlight(pool.threads), async (entry) => {
    const files = plan?.keptFor(entry);
    const cached = (ext: string): string | null => (files ? path.join(plan!.folder, `${files.key}${ext}`) : null);
    const page = { to: path.join(pagesDir, `${entry.slug}.html`), keep: cached('.html') };
    const download = { to: path.join(downloadsDir, `${entry.slug}.json.gz`), keep: cached('.json.gz') };
    const render = { page: files?.pageKept ? null : page, download: files?.downloadKept ? null : download };
    if (!render.page) kept++;
    await Promise.all([
      !render.page && fileAs(page.keep!, page.to),
      !render.download && fileAs(download.keep!, download.to),
      (render.page || render.download) && pool.write({ entry: jobEntry(entry), runConfig: runConfigHref(data, entry), ...render }),
    ]);
  });
  return { kept, rendered: data.profiles.length - kept, cached: plan !== null };
}

/**
 * Once the pages and the downloads are all written: every file no Profile of this build uses is removed, so the cache
 * holds one site's pages and downloads.
 */
export async function pruneKeptFiles(): Promise<void> {
  const plan = profilePagePlan();
  if (!plan) return;
  const used = new Set(plan.keys().flatMap((key) => [`${key}.html`, `${key}.json.gz`]));
  const stale = (await readdir(plan.folder)).filter((name) => !used.has(name));
  await inFlight(stale, FILE_OPS, (name) => rm(path.join(plan.folder, name), { force: true }));
}
