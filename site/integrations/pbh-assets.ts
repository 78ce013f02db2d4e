import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportStore, openStore } from '@pbh/core';
import type { AstroIntegration } from 'astro';
import { build } from 'esbuild';
import { exitIfStoreLocked, siteDbPath } from '../src/lib/site-db.js';
import { writeBrowserDatabase } from './browser-database.js';
import { writeDataFiles } from './data-files.js';

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
 * The chart pool's worker (src/charts/pool.ts) as one ES module beside the site's packages: a worker thread runs a
 * file with Node itself, outside Vite, so its TypeScript is bundled here, before the pages are built.
 */
export async function bundleChartWorker(siteDir: string): Promise<string> {
  const outfile = path.join(siteDir, 'node_modules', '.cache', 'pbh-site', 'chart-worker.mjs');
  await build({
    entryPoints: [path.join(siteDir, 'src', 'charts', 'chart-worker.ts')],
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

/** Before the pages: the chart worker. After them: the downloads, the whole database as Parquet and as the console's DuckDB file, duckdb-wasm served from the site itself, and the client scripts. */
export function pbhAssets(options: { siteDir: string }): AstroIntegration {
  return {
    name: 'pbh-assets',
    hooks: {
      'astro:build:start': async () => {
        process.env.PBH_SITE_CHART_WORKER = await bundleChartWorker(options.siteDir);
      },
      'astro:build:done': async ({ dir, logger }) => {
        const out = fileURLToPath(dir);
        // Astro 5 leaves its content-layer stubs in a static build's output; they are not part of the site.
        for (const stub of ['content-assets.mjs', 'content-modules.mjs']) rmSync(path.join(out, stub), { force: true });
        // Each step says how long it took: `npm run bench:site` reads these lines for its breakdown.
        const timed = async <T>(step: () => Promise<T>, say: (result: T, seconds: string) => string): Promise<void> => {
          const started = performance.now();
          const result = await step();
          logger.info(say(result, `in ${((performance.now() - started) / 1000).toFixed(2)} s`));
        };
        // DuckDB exports on its own threads while the downloads are rendered on this one: both at once.
        await Promise.all([
          timed(() => writeDataFiles(path.join(out, 'data')), (n, t) => `wrote ${n} downloads (CSV, JSON, each Profile's own) into data/ ${t}`),
          timed(() => publishDatabase(siteDbPath(), path.join(out, 'data')), (_, t) => `exported the database to data/parquet/*.parquet and data/pbh.duckdb ${t}`),
        ]);
        await timed(
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
