#!/usr/bin/env node
// `npm run demo`: installs what is missing and builds (scripts/ensure.mjs), generates the bundled suite, runs it on every available
// engine into results/pbh.duckdb, prints the leaderboard and an example query. Plain Node: runs before any install.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const db = process.env.PBH_DB ?? 'results/pbh.duckdb';
const started = Date.now();

function step(title, cmd, args, { allowFail = false } = {}) {
  process.stdout.write(`\n== ${title}\n$ ${[cmd, ...args].join(' ')}\n`);
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  process.stdout.write(`-- ${title}: ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  if (r.status !== 0 && !allowFail) {
    process.stderr.write(`demo: "${title}" failed (exit ${r.status ?? r.signal}). Fix the error above and run npm run demo again.\n`);
    process.exit(r.status ?? 1);
  }
  return r.status;
}

const pbh = (...args) => ['node', [path.join('packages', 'core', 'dist', 'cli', 'main.js'), ...args]];

step('install and build', 'node', [path.join('scripts', 'ensure.mjs'), 'demo']);
const measureStart = Date.now();
// The base suite only: the sparsity study's jax-trained families are for `npm run study` and the tests.
step('generate the bundled suite', path.join('.venv', 'bin', 'python'), [path.join('python', 'generate_suite.py'), '--base-only']);
// Cells that fail are recorded as failed Profiles and shown in the summary; the demo goes on.
step('run configs/digits.yaml', ...pbh('run', 'configs/digits.yaml', '--db', db), { allowFail: true });
step('run configs/vision.yaml', ...pbh('run', 'configs/vision.yaml', '--db', db), { allowFail: true });
step('run configs/tabular.yaml', ...pbh('run', 'configs/tabular.yaml', '--db', db), { allowFail: true });
step('leaderboard', ...pbh('query', 'SELECT model, engine_entry AS engine, precision, batch_size, validity, round(throughput_sps, 1) AS samples_per_s, round(p50_ms, 3) AS p50_ms, round(p99_ms, 3) AS p99_ms, latency_boundary, round(top1 * 100, 1) AS top1_pct FROM leaderboard ORDER BY model, batch_size, samples_per_s DESC', '--db', db));
// What a first look should see: measured Profiles VALID by LoadGen's rules, quiet and not busy: the verdicts stored
// with each Profile when it was assembled (core's publish/verdicts.ts), never judged again here.
step('verdicts and noise', ...pbh('query', `SELECT count(*) AS measured, count(*) FILTER (validity = 'VALID') AS valid, count(*) FILTER (validity = 'INVALID') AS invalid,
  count(*) FILTER (noisy) AS noisy, count(*) FILTER (busy) AS busy, count(*) FILTER (stopped_by = 'budget') AS stopped_on_budget
FROM profiles
WHERE status = 'ok' AND run_id IN (SELECT run_id FROM runs WHERE started_at >= to_timestamp(${Math.floor(measureStart / 1000)}))`, '--db', db), { allowFail: true });
if (existsSync(path.join(root, 'site', 'package.json'))) step('site', ...pbh('site', 'build', '--db', db), { allowFail: true });
const secs = (ms) => `${Math.round(ms / 1000)} s`;
process.stdout.write(`
Demo done in ${secs(Date.now() - started)} (suite + runs: ${secs(Date.now() - measureStart)}). Profiles are in ${db}.
Try:
  npx pbh query "SELECT model, engine_entry, precision, scenario, validity, batch_size, throughput_sps, p50_ms FROM leaderboard" --db ${db}
  npx pbh run configs/scenarios.yaml --db ${db}   # LoadGen's four scenarios with VALID/INVALID verdicts
  npx pbh query "SELECT model_name, engine_name, status, error FROM profiles WHERE status <> 'ok'" --db ${db}
`);
