import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'astro/config';
import { pbhAssets } from './integrations/pbh-assets.js';

const siteDir = path.dirname(fileURLToPath(import.meta.url));
// `pbh site build --db/--out` set these; a bare `astro build` reads the default results file.
process.env.PBH_SITE_DB ??= path.resolve(siteDir, '..', 'results', 'pbh.duckdb');
// Published pages show local paths relative to this repository (src/lib/scrub.ts).
process.env.PBH_SITE_REPO ??= path.resolve(siteDir, '..');
const outDir = process.env.PBH_SITE_OUT ? path.resolve(process.env.PBH_SITE_OUT) : path.join(siteDir, 'dist');

export default defineConfig({
  output: 'static',
  outDir,
  // page.html files, linked relatively: the site works from any folder and from file://. Pages render four at a
  // time: a page's file is written on libuv's thread pool, and one page at a time left the build idle waiting on
  // those writes. (Profile pages are not Astro's: integrations/profile-pages.ts writes them on worker threads.)
  build: { format: 'file', inlineStylesheets: 'never', concurrency: 4 },
  compressHTML: true,
  devToolbar: { enabled: false },
  prefetch: false,
  vite: {
    // Core opens DuckDB through a native module: load it from node_modules, never bundle it.
    ssr: { external: ['@pbh/core', '@duckdb/node-api'] },
  },
  integrations: [pbhAssets({ siteDir })],
});
