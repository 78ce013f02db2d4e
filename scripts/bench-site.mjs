#!/usr/bin/env node
// npm run bench:site — how long `pbh site build` takes on a database of 10,000 Profiles, how heavy the site is
// without duckdb-wasm, and how heavy the leaderboard page is. The Profiles come from one real `pbh run` of the bundled digits models, replicated
// into new runs with SQL (new run_id / profile_id / created_at, everything else copied), so every page type
// is built from real measurements. Targets (issue 15): 10,000 Profiles build in under 30 s on a 2-core machine and the
// site without duckdb-wasm stays under 300 MB; the leaderboard page under 300 KB. The load average is printed beside
// the time: on a shared machine the build time is that machine's, not the site's.
// The build runs twice: cold (an empty page cache: every Profile page rendered and its chart drawn; PBH_SITE_PAGE_CACHE)
// and warm (the same cache, after one more run's Profiles are added: what a rebuild after `pbh run` costs).
// Needs `npm run build` and the bundled suite (npm run demo generates both).
//   PROFILES=10000  how many Profiles to end with      KEEP=1  keep the temp folder (database and site)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '@pbh/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pbh = path.join(root, 'packages', 'core', 'dist', 'cli', 'main.js');
const suite = path.join(root, '.cache', 'suite');
const TARGET_PROFILES = Number(process.env.PROFILES ?? 10000);
// The targets are for 10,000 Profiles; a smaller PROFILES scales the build-time and size targets down in proportion.
const SCALE = TARGET_PROFILES / 10000;
const TARGET_BUILD_S = 30 * SCALE;
const TARGET_SITE_MB = 300 * SCALE;
const TARGET_LEADERBOARD_KB = 300;

for (const needed of [pbh, path.join(suite, 'models', 'digits_cnn.onnx')]) {
  if (!existsSync(needed)) {
    process.stderr.write(`bench-site: ${needed} is missing. Run npm run build and .venv/bin/python python/generate_suite.py (or npm run demo) first.\n`);
    process.exit(2);
  }
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'pbh-bench-site-'));
const db = path.join(tmp, 'bench.duckdb');
const out = path.join(tmp, 'site');
const model = (name, file, extra = {}) => ({ name, path: path.join(suite, 'models', file), family: 'cnn', framework: 'numpy', weights: 'trained', ...extra });
const config = {
  name: 'bench-site',
  seed: 0,
  dataset: {
    kind: 'npy',
    name: 'digits-npy',
    inputs: { x: path.join(suite, 'data', 'digits_x.npy') },
    labels: path.join(suite, 'data', 'digits_y.npy'),
    limit: 64,
  },
  models: [
    model('digits_cnn', 'digits_cnn.onnx'),
    model('digits_cnn_sparse50', 'digits_cnn_sparse50.onnx', { optimization: { sparsity: { kind: 'unstructured', target: 0.5 } } }),
    model('digits_cnn_sparse80', 'digits_cnn_sparse80.onnx', { optimization: { sparsity: { kind: 'unstructured', target: 0.8 } } }),
  ],
  engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 2 } }, { name: 'openvino' }, { name: 'tvm' }],
  batch_sizes: [1, 8],
  warmup_batches: 1,
  sessions: 3,
  scorers: ['top1'],
};
const configFile = path.join(tmp, 'bench-site.json');
writeFileSync(configFile, JSON.stringify(config, null, 2));

const pageCache = path.join(tmp, 'page-cache');

function step(title, args) {
  process.stdout.write(`\n== ${title}\n`);
  const started = Date.now();
  // pbh site build logs a line per page on stderr: 10,000 Profiles write more than spawnSync's default 1 MB buffer,
  // which would kill the build (ENOBUFS). Keep it all, print the tail on failure.
  const r = spawnSync(process.execPath, [pbh, ...args], {
    cwd: root, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8', maxBuffer: 1024 ** 3, env: { ...process.env, PBH_SITE_PAGE_CACHE: pageCache },
  });
  const stderr = (r.stderr ?? '').split('\n').slice(-60).join('\n') + (r.error ? `\n${r.error.message}` : '');
  return { status: r.status, stderr, log: r.stderr ?? '', seconds: (Date.now() - started) / 1000 };
}

/** Seconds from Astro's "1.23s" or "456ms". */
const seconds = (match) => (match[2] === 'ms' ? Number(match[1]) / 1000 : Number(match[1]));

/**
 * Where a build's time went, from its own log: Vite's bundling, Astro's pages (its own figure) and each step of the
 * build integration (its "in N s" from the build's start: the database read, the Profile pages on their worker
 * threads, the downloads and the export run beside Vite and Astro's pages).
 */
function breakdown(log) {
  const parts = [];
  const vite = log.match(/\[vite\] ✓ built in ([\d.]+)(m?s)/);
  if (vite) parts.push(`bundling ${seconds(vite)} s`);
  const all = log.match(/generating static routes[\s\S]*?✓ Completed in ([\d.]+)(m?s)/);
  if (all) parts.push(`Astro's pages ${seconds(all)} s`);
  const profiles = log.match(/linked (\d+) kept Profile pages in and rendered (\d+) new ones[^\n]* in ([\d.]+) s/);
  if (profiles) parts.push(`Profile pages ${profiles[3]} s (${profiles[2]} rendered, ${profiles[1]} kept)`);
  for (const m of log.matchAll(/\[pbh-assets\] (read|wrote|exported)[^\n]* in ([\d.]+) s/g)) parts.push(`${m[1]} ${m[2]} s`);
  return parts.join(', ');
}

const run = step('one real pbh run (3 models x 3 engines x 2 batch sizes)', ['run', configFile, '--db', db]);
if (run.status !== 0 && run.status !== 1) {
  process.stderr.write(run.stderr);
  process.exit(1);
}

/**
 * Copies every row of the real run under new ids, `copies` times, each copy one day earlier, until `total` Profiles.
 * Each copy's raw samples are shifted by its copy number in nanoseconds, so no two Profiles draw the same chart (real
 * Profiles never repeat their samples).
 */
async function replicate(total) {
  const store = await openStore(db);
  try {
    return await store.withConnection(async (c) => {
      const one = async (sql) => (await c.runAndReadAll(sql)).getRows()[0];
      const [baseRun] = await one('SELECT run_id FROM runs ORDER BY started_at LIMIT 1');
      const [perRun] = await one(`SELECT count(*)::INTEGER FROM profiles WHERE run_id = '${baseRun}'`);
      // Copies continue after those already made (a second call adds one more run's worth), each with its own shift.
      const [profilesNow, runsNow] = await one('SELECT (SELECT count(*) FROM profiles)::INTEGER, (SELECT count(*) FROM runs)::INTEGER');
      let have = Number(profilesNow);
      for (let copy = Number(runsNow); have < total; copy++) {
        const take = Math.min(Number(perRun), total - have);
        const shift = `INTERVAL ${copy} DAY`;
        await c.run('BEGIN TRANSACTION');
        await c.run(`CREATE TEMP TABLE idmap AS SELECT profile_id AS old_id, uuid()::VARCHAR AS new_id FROM profiles
                     WHERE run_id = '${baseRun}' ORDER BY profile_id LIMIT ${take}`);
        await c.run(`CREATE TEMP TABLE newrun AS SELECT uuid()::VARCHAR AS run_id`);
        await c.run(`INSERT INTO runs SELECT r.* REPLACE ((SELECT run_id FROM newrun) AS run_id, r.started_at - ${shift} AS started_at,
                     r.finished_at - ${shift} AS finished_at) FROM runs r WHERE r.run_id = '${baseRun}'`);
        await c.run(`INSERT INTO profiles SELECT p.* REPLACE (m.new_id AS profile_id, (SELECT run_id FROM newrun) AS run_id,
                       p.created_at - ${shift} AS created_at,
                       json_merge_patch(p.profile_json, json_object('profile_id', m.new_id, 'run_id', (SELECT run_id FROM newrun),
                         'created_at', strftime(p.created_at - ${shift}, '%Y-%m-%dT%H:%M:%S.%gZ'))) AS profile_json)
                     FROM profiles p JOIN idmap m ON m.old_id = p.profile_id`);
        for (const table of ['sessions', 'samples', 'layers', 'scores']) {
          const shift = table === 'samples' ? `, t.ns + ${copy} AS ns` : '';
          await c.run(`INSERT INTO ${table} SELECT t.* REPLACE (m.new_id AS profile_id${shift}) FROM ${table} t JOIN idmap m ON m.old_id = t.profile_id`);
        }
        await c.run('DROP TABLE idmap');
        await c.run('DROP TABLE newrun');
        await c.run('COMMIT');
        have += take;
      }
      const [profiles, runs, samples] = await one(
        'SELECT (SELECT count(*) FROM profiles)::INTEGER, (SELECT count(*) FROM runs)::INTEGER, (SELECT count(*) FROM samples)::INTEGER',
      );
      return { profiles, runs, samples, perRun: Number(perRun) };
    });
  } finally {
    await store.close();
  }
}

process.stdout.write(`\n== replicating into ${TARGET_PROFILES} Profiles\n`);
const made = await replicate(TARGET_PROFILES);
process.stdout.write(`${made.profiles} Profiles in ${made.runs} runs, ${made.samples} raw samples\n`);

function timedBuild(title) {
  const before = os.loadavg()[0];
  const result = step(title, ['site', 'build', '--db', db, '--out', out]);
  const after = os.loadavg()[0];
  if (result.status !== 0) {
    process.stderr.write(result.stderr);
    process.exit(1);
  }
  return { seconds: result.seconds, load: `load average ${before.toFixed(1)} before, ${after.toFixed(1)} after`, parts: breakdown(result.log) };
}

rmSync(pageCache, { recursive: true, force: true });
const build = timedBuild('pbh site build, cold (an empty page cache)');

function folderBytes(dir, skip = new Set()) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}

const kb = (bytes) => bytes / 1024;
const leaderboard = kb(statSync(path.join(out, 'index.html')).size);
const profilePages = readdirSync(path.join(out, 'profiles')).map((f) => statSync(path.join(out, 'profiles', f)).size);
const pages = readdirSync(out, { recursive: true }).filter((f) => String(f).endsWith('.html')).length;
const mb = (bytes) => bytes / 1024 / 1024;
const siteMb = mb(folderBytes(out, new Set(['duckdb'])));
const duckdbMb = mb(folderBytes(path.join(out, 'duckdb')));
// Where the bytes are: each top-level folder (data/ split into its own folders) without duckdb-wasm.
const parts = [
  ...readdirSync(out, { withFileTypes: true }).filter((e) => e.isDirectory() && e.name !== 'data' && e.name !== 'duckdb').map((e) => [e.name, mb(folderBytes(path.join(out, e.name)))]),
  ...readdirSync(path.join(out, 'data'), { withFileTypes: true }).map((e) => [`data/${e.name}`, mb(e.isDirectory() ? folderBytes(path.join(out, 'data', e.name)) : statSync(path.join(out, 'data', e.name)).size)]),
]
  .filter(([, size]) => size >= 1)
  .sort((a, b) => b[1] - a[1]);
// Sizes are the cold build's site; the warm build then rewrites it with one run more.
process.stdout.write(`\n== one more run: ${made.perRun} more Profiles\n`);
const more = await replicate(made.profiles + made.perRun);
const warm = timedBuild('pbh site build, warm (the page cache of the cold build)');
const verdict = (ok) => (ok ? 'ok' : 'OVER TARGET');
process.stdout.write(`
Site benchmark (${made.profiles} Profiles, ${os.cpus().length} CPUs)
  build time, cold (wall)             ${build.seconds.toFixed(1)} s   target < ${TARGET_BUILD_S.toFixed(0)} s: ${verdict(build.seconds < TARGET_BUILD_S)}  (${build.load})
    where it went                      ${build.parts}
  build time, warm (wall)             ${warm.seconds.toFixed(1)} s   target < ${TARGET_BUILD_S.toFixed(0)} s: ${verdict(warm.seconds < TARGET_BUILD_S)}  for ${more.profiles} Profiles, one run more than the cold build's  (${warm.load})
    where it went                      ${warm.parts}
  leaderboard page (index.html)       ${leaderboard.toFixed(1)} KB   target < ${TARGET_LEADERBOARD_KB} KB: ${verdict(leaderboard < TARGET_LEADERBOARD_KB)}
  profile pages                        ${profilePages.length}, mean ${kb(profilePages.reduce((a, b) => a + b, 0) / profilePages.length).toFixed(1)} KB, max ${kb(Math.max(...profilePages)).toFixed(1)} KB
  HTML pages                           ${pages}
  site without duckdb-wasm             ${siteMb.toFixed(1)} MiB (${((siteMb * 1024 * 1024) / 1e6).toFixed(1)} MB)   target < ${TARGET_SITE_MB.toFixed(0)} MB, either unit: ${verdict((siteMb * 1024 * 1024) / 1e6 < TARGET_SITE_MB)}
  duckdb-wasm (duckdb/)                ${duckdbMb.toFixed(1)} MiB
  largest parts                        ${parts.slice(0, 6).map(([name, size]) => `${name} ${size.toFixed(0)} MiB`).join(', ')}
`);
if (process.env.KEEP === '1') process.stdout.write(`kept ${tmp} (database: ${db}, site: ${out})\n`);
else rmSync(tmp, { recursive: true, force: true });
