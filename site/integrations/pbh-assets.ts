import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportStore, openStore } from '@pbh/core';
import type { AstroIntegration, AstroIntegrationLogger } from 'astro';
import { build } from 'esbuild';
import { siteData } from '../src/lib/data.js';
import { exitIfStoreLocked, siteDbPath } from '../src/lib/site-db.js';
import { writeBrowserDatabase } from './browser-database.js';
import { writeDataFiles } from './data-files.js';
import { scrubParquetFiles } from './scrub-exports.js';
import { hashSiteCode, pruneKeptFiles, writeProfilePages } from './profile-pages.js';

/**
 * The duckdb-wasm files the SQL console loads: the exception-handling build and its worker only. Every browser with
 * WebAssembly exception handling (Chrome and Edge 95, Firefox 100, Safari 15.2, all from 2021-22) runs it; the MVP
 * build for older ones would add 39 MB that no current browser loads.
 */
export const DUCKDB_WASM_FILES = ['duckdb-eh.wasm', 'duckdb-browser-eh.worker.js'];

/**
 * The Parquet export and the console's DuckDB copy, made while this process holds the store read-only:
 * a writer that starts meanwhile cannot take the file between the two, and a writer that came first
 * is met by openStore's typed lock error.
 */
async function publishDatabase(db: string, outDir: string): Promise<void> {
  const store = await openStore(db, { readOnly: true }).catch((error: unknown) => {
    exitIfStoreLocked(error);
    throw error;
  });
  try {
    // profile_json is each Profile as stored, the same bytes as its own download (data/profiles/<id>.json.gz): at
    // 10,000 Profiles it was four fifths of the Parquet export. Every other column is kept.
    await exportStore(store, { format: 'parquet', outDir: path.join(outDir, 'parquet'), omit: { profiles: ['profile_json'] } });
    // The store records local paths as they were (model files, caches, the config); a published file carries none.
    await scrubParquetFiles(path.join(outDir, 'parquet'));
    await writeBrowserDatabase(db, path.join(outDir, 'pbh.duckdb'));
  } finally {
    await store.close();
  }
}

function copyDuckdbWasm(siteDir: string, outDir: string): void {
  const require = createRequire(path.join(siteDir, 'package.json'));
  const dist = path.dirname(require.resolve('@duckdb/duckdb-wasm/dist/duckdb-browser.mjs'));
  mkdirSync(outDir, { recursive: true });
  for (const file of DUCKDB_WASM_FILES) copyFileSync(path.join(dist, file), path.join(outDir, file));
}

/**
 * Client scripts are bundled here rather than by Astro so that pages load them by relative URL
 * (Astro's /_astro/ URLs are absolute and break when the site is served from a sub-folder).
 */
async function bundleClientScripts(siteDir: string, outDir: string): Promise<void> {
  await build({
    entryPoints: {
      table: path.join(siteDir, 'src', 'client', 'table.ts'),
      'sql-console': path.join(siteDir, 'src', 'client', 'sql-console.ts'),
    },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
}

/**
 * The Profile page pool's worker (src/lib/profile-page/pool.ts) as one ES module beside the site's packages: a worker
 * thread runs a file with Node itself, outside Vite, so its TypeScript is bundled here, before the pages are built.
 */
export async function bundlePageWorker(siteDir: string): Promise<string> {
  const outfile = path.join(siteDir, 'node_modules', '.cache', 'pbh-site', 'page-worker.mjs');
  await build({
    entryPoints: [path.join(siteDir, 'src', 'lib', 'profile-page', 'worker.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return outfile;
}

/** Runs a step and logs how long it took: `npm run bench:site` reads these lines for its breakdown. */
async function timed<T>(logger: AstroIntegrationLogger, step: () => Promise<T>, say: (result: T, seconds: string) => string): Promise<void> {
  const started = performance.now();
  const result = await step();
  logger.info(say(result, `in ${((performance.now() - started) / 1000).toFixed(2)} s`));
}

/**
 * The Profile pages, the downloads and the database export, started with the build instead of after its pages: the
 * Profile pages on the page pool's threads, the export on DuckDB's, the compression on libuv's, beside Vite's bundling
 * and Astro's pages on the main thread. Astro empties its output folder once the build has started, so they are
 * written to folders beside it and moved in when the pages are done.
 */
function startFiles(outDir: string, logger: AstroIntegrationLogger): { folders: { data: string; profiles: string }; done: Promise<void> } {
  const folders = { data: `${outDir}.pbh-data`, profiles: `${outDir}.pbh-profiles` };
  for (const folder of Object.values(folders)) rmSync(folder, { recursive: true, force: true });
  // A build that fails before its end leaves nothing beside the output.
  process.once('exit', () => {
    for (const folder of Object.values(folders)) rmSync(folder, { recursive: true, force: true });
  });
  const done = Promise.all([
    // The read every page and download shares (siteData() is kept per build process), started here with the build.
    timed(logger, () => siteData(), (data, t) => `read ${data.profiles.length} Profiles from the database ${t}`),
    timed(
      logger,
      () => writeProfilePages(folders.profiles, path.join(folders.data, 'profiles')),
      (pages, t) =>
        pages.cached
          ? `linked ${pages.kept} kept Profile pages in and rendered ${pages.rendered} new ones (pages and JSON downloads, kept for the next build) ${t}`
          : `rendered ${pages.rendered} Profile pages and JSON downloads (PBH_SITE_PAGE_CACHE=off: none kept) ${t}`,
    ),
    timed(logger, () => writeDataFiles(folders.data), (n, t) => `wrote ${n} downloads (CSV, JSON) into data/ ${t}`),
    // After the read: both at once slowed the read, which every page waits for, more than the export gains.
    siteData().then(() =>
      timed(logger, () => publishDatabase(siteDbPath(), folders.data), (_, t) => `exported the database to data/parquet/*.parquet and data/pbh.duckdb ${t}`),
    ),
  ]).then(() => undefined);
  // Awaited at the build's end; a failure meanwhile must not be an unhandled rejection that stops the build elsewhere.
  done.catch(() => undefined);
  return { folders, done };
}

/** Moves every entry of `from` into `to` (the folder itself where `to` is new; a copy across file systems). */
function moveInto(from: string, to: string): void {
  if (!existsSync(to)) {
    try {
      renameSync(from, to);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    }
  }
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    try {
      renameSync(path.join(from, name), path.join(to, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      cpSync(path.join(from, name), path.join(to, name), { recursive: true });
    }
  }
  rmSync(from, { recursive: true, force: true });
}

/**
 * With the build: the page worker, the hash of the site's code that kept Profile pages are filed under, then the
 * Profile pages, the downloads and the whole database as Parquet and as the console's DuckDB file (startFiles). After
 * Astro's pages: those moved in, the cache pruned to this build's files, duckdb-wasm served from the site itself, and
 * the client scripts.
 */
export function pbhAssets(options: { siteDir: string }): AstroIntegration {
  let outDir = '';
  let files: ReturnType<typeof startFiles> | null = null;
  return {
    name: 'pbh-assets',
    hooks: {
      'astro:config:done': ({ config }) => {
        outDir = fileURLToPath(config.outDir);
      },
      'astro:build:start': async ({ logger }) => {
        process.env.PBH_SITE_PAGE_WORKER = await bundlePageWorker(options.siteDir);
        process.env.PBH_SITE_PAGE_CODE = hashSiteCode(options.siteDir);
        files = startFiles(outDir, logger);
      },
      'astro:build:done': async ({ dir, logger }) => {
        const out = fileURLToPath(dir);
        // Astro 5 leaves its content-layer stubs in a static build's output; they are not part of the site.
        for (const stub of ['content-assets.mjs', 'content-modules.mjs']) rmSync(path.join(out, stub), { force: true });
        if (!files) throw new Error('pbh-assets: the build ended without having started (astro:build:start did not run).');
        await files.done;
        await pruneKeptFiles();
        moveInto(files.folders.data, path.join(out, 'data'));
        moveInto(files.folders.profiles, path.join(out, 'profiles'));
        await timed(
          logger,
          async () => {
            copyDuckdbWasm(options.siteDir, path.join(out, 'duckdb'));
            await bundleClientScripts(options.siteDir, path.join(out, 'assets'));
          },
          (_, t) => `copied duckdb-wasm into duckdb/ and bundled the client scripts into assets/ ${t}`,
        );
      },
    },
  };
}
