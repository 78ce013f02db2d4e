import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { profilePagePlan } from '../src/lib/profile-page/cache.js';
import { inFlight, keepCopy } from './file-jobs.js';

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

/** Copies in flight at once: each runs on libuv's thread pool. */
const IN_FLIGHT = 16;

/**
 * After the pages: each kept Profile page copied into the site, and each page rendered now kept (keepCopy;
 * integrations/data-files.ts does the same for the downloads). Returns how many pages were kept and rendered; null when nothing is kept.
 */
export async function finishProfilePages(outDir: string): Promise<{ kept: number; rendered: number } | null> {
  const plan = profilePagePlan();
  if (!plan) return null;
  const pagesDir = path.join(outDir, 'profiles');
  await mkdir(pagesDir, { recursive: true });
  await mkdir(plan.folder, { recursive: true });
  const cached = (key: string): string => path.join(plan.folder, `${key}.html`);
  await inFlight(plan.files, IN_FLIGHT, async ({ slug, key, pageKept }) => {
    const page = path.join(pagesDir, `${slug}.html`);
    await (pageKept ? copyFile(cached(key), page) : keepCopy(page, cached(key)));
  });
  const kept = plan.files.filter((f) => f.pageKept).length;
  return { kept, rendered: plan.files.length - kept };
}

/**
 * Once the pages and the downloads are all written: every file no Profile of this build uses is removed, so the cache
 * holds one site's pages and downloads.
 */
export async function pruneKeptFiles(): Promise<void> {
  const plan = profilePagePlan();
  if (!plan) return;
  const used = new Set(plan.files.flatMap((f) => [`${f.key}.html`, `${f.key}.json.gz`]));
  const stale = (await readdir(plan.folder)).filter((name) => !used.has(name));
  await inFlight(stale, IN_FLIGHT, (name) => rm(path.join(plan.folder, name), { force: true }));
}
