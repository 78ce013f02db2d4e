import { createHash, type Hash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * Rendered charts kept across builds, content-addressed: the key hashes the chart's input data, the source of the
 * functions that draw it and Observable Plot's version, so a change to any of them misses and renders afresh. A
 * rebuild after one more run renders only the new Profiles' charts (Plot with linkedom costs ~7 ms a chart; 10,000
 * Profiles were most of the build's time). `PBH_SITE_CHART_CACHE` names the folder (default:
 * node_modules/.cache/pbh-site-charts in the site package); `off` renders every chart every time.
 */
const setting = process.env.PBH_SITE_CHART_CACHE;
const folder = setting === 'off' ? null : path.resolve(setting ?? path.join(process.cwd(), 'node_modules', '.cache', 'pbh-site-charts'));

const require = createRequire(import.meta.url);
const plotPackage = path.join(path.dirname(require.resolve('@observablehq/plot')), '..', 'package.json');
const plotVersion = (JSON.parse(readFileSync(plotPackage, 'utf8')) as { version?: unknown }).version;

let ready = false;

type Code = readonly ((...args: never[]) => unknown)[];

/**
 * The hash of Plot's version and the drawing code, once per code list: every Profile page passes the same list, whose
 * ~8 KB of source need not be hashed again for each of 10,000 charts.
 */
const codeHashes = new WeakMap<Code, Hash>();

function codeHash(code: Code): Hash {
  let hash = codeHashes.get(code);
  if (!hash) {
    hash = createHash('sha256').update(String(plotVersion)).update(code.map(String).join('\n'));
    codeHashes.set(code, hash);
  }
  return hash;
}

/** Where the chart for `input` drawn by `code` is kept, or null when the cache is off. */
function cacheFile(input: unknown, code: Code): string | null {
  if (folder === null) return null;
  return path.join(folder, `${codeHash(code).copy().update(JSON.stringify(input)).digest('hex')}.svg`);
}

function cached(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // Not cached yet (or unreadable): it is drawn.
    return null;
  }
}

function keep(file: string, svg: string): string {
  if (!ready) {
    mkdirSync(folder!, { recursive: true });
    ready = true;
  }
  // Written aside, then renamed: a build killed mid-write leaves no half chart under the key.
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, svg);
  renameSync(partial, file);
  return svg;
}

/** The chart for `input` from the cache, else `render()`'s, stored for the next build. */
export function cachedChart(input: unknown, code: Code, render: () => string): string {
  const file = cacheFile(input, code);
  if (file === null) return render();
  return cached(file) ?? keep(file, render());
}

/** cachedChart for a chart drawn elsewhere (a worker thread of charts/pool.ts). */
export async function cachedChartAsync(input: unknown, code: Code, render: () => Promise<string>): Promise<string> {
  const file = cacheFile(input, code);
  if (file === null) return render();
  return cached(file) ?? keep(file, await render());
}
