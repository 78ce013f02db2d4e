#!/usr/bin/env node
// npm run bench:repeat — the demo's configs run twice, back to back, on one clone, into two databases; then what a
// reader would see change: each Profile's rerun/first throughput, each pair's paired-round ratio (pair_ratios) second
// against first, the #1 entry of every group (model x batch x scenario x executed precision), and the noisy share.
// Targets (issue 40): rerun/first within ±10% for 90% of Profiles; pair ratios within ±5% for 90% of pairs; no change of
// #1 in a group where either run claimed a winner (lead_claim 'fastest'); at most 10% of Profiles noisy.
// Needs `npm run build`, the venv and the bundled suite (npm run demo makes all three). Do not run it beside other work:
// it measures the machine as much as the engines.
// Knobs: CONFIGS (comma list, default the demo's three), MODELS, ENGINES (entry labels or names), BATCHES (comma lists:
// keep only those cells, for a short check), REPLICAS (rounds.replicas for every config), OUT (results/bench-repeat.json).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CONFIGS = (process.env.CONFIGS ?? 'configs/digits.yaml,configs/vision.yaml,configs/tabular.yaml').split(',').filter(Boolean);
const list = (name) => (process.env[name] ? process.env[name].split(',').map((s) => s.trim()).filter(Boolean) : null);
const MODELS = list('MODELS');
const ENGINES = list('ENGINES');
const BATCHES = list('BATCHES')?.map(Number) ?? null;
const REPLICAS = process.env.REPLICAS ? Number(process.env.REPLICAS) : null;
const OUT = path.resolve(root, process.env.OUT ?? path.join('results', 'bench-repeat.json'));
const dir = path.join(root, 'results', 'bench-repeat');
const cli = path.join(root, 'packages', 'core', 'dist', 'cli', 'main.js');

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0 && r.status !== 1) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}`);
}

function query(db, sql) {
  const r = spawnSync('node', [cli, 'query', sql, '--db', db, '--format', 'json'], { cwd: root, encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
  if (r.status !== 0) throw new Error(`pbh query on ${db} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The config as given, or (with MODELS/ENGINES/BATCHES) a filtered copy beside it, so its relative paths still hold. */
function configFor(file) {
  if (!MODELS && !ENGINES && !BATCHES && !REPLICAS) return { file, cleanup: () => {} };
  const full = path.resolve(root, file);
  const c = parse(readFileSync(full, 'utf8'));
  if (MODELS) c.models = c.models.filter((m) => MODELS.includes(m.name));
  if (ENGINES) c.engines = c.engines.filter((e) => ENGINES.includes(e.label ?? e.name));
  if (BATCHES) c.batch_sizes = c.batch_sizes.filter((b) => BATCHES.includes(b));
  if (REPLICAS) c.rounds = { ...c.rounds, replicas: REPLICAS };
  if (!c.models.length || !c.engines.length || !c.batch_sizes.length) return null;
  const names = new Set(c.models.map((m) => m.name));
  const entries = new Set(c.engines.map((e) => e.label ?? e.name));
  c.exclude = (c.exclude ?? []).filter((x) => (!x.model || names.has(x.model)) && (!x.engine || entries.has(x.engine)));
  delete c.$schema;
  const copy = path.join(path.dirname(full), `.bench-repeat-${process.pid}-${path.basename(full)}`);
  writeFileSync(copy, stringify(c));
  return { file: copy, cleanup: () => rmSync(copy, { force: true }) };
}

const quantile = (values, q) => {
  const s = Float64Array.from(values).sort();
  return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * q))] : NaN;
};
const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'n/a');
const f3 = (x) => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');

// The demo's own first step: the bundled suite (a no-op when it is up to date).
run(path.join(root, '.venv', 'bin', 'python'), [path.join('python', 'generate_suite.py'), '--base-only']);
mkdirSync(dir, { recursive: true });
const dbs = [path.join(dir, 'first.duckdb'), path.join(dir, 'rerun.duckdb')];
for (const db of dbs) for (const suffix of ['', '.wal']) rmSync(db + suffix, { force: true });
const started = Date.now();
for (const [i, db] of dbs.entries()) {
  for (const config of CONFIGS) {
    const c = configFor(config);
    if (!c) continue;
    try {
      process.stdout.write(`\n== run ${i + 1} of 2: ${config}\n`);
      run('node', [cli, 'run', c.file, '--db', db]);
    } finally {
      c.cleanup();
    }
  }
}
const seconds = (Date.now() - started) / 1000;

const PROFILES = `SELECT cell_key, model_name AS model, batch_size, scenario, coalesce(engine_label, engine_name) AS engine,
  precision_executed AS precision, throughput_mean AS throughput, noisy, lead_claim, profile_id
FROM profiles WHERE status = 'ok'`;
const PAIRS = `SELECT a.cell_key AS a, r.other_cell_key AS b, r.ratio, r.ci95_low, r.ci95_high, r.verdict
FROM pair_ratios r JOIN profiles a USING (profile_id)`;
const [first, rerun] = dbs.map((db) => query(db, PROFILES));
const [pairsFirst, pairsRerun] = dbs.map((db) => query(db, PAIRS));

// Same Profile (cell key) in both runs: rerun / first throughput.
const byKey = new Map(first.map((p) => [p.cell_key, p]));
const ratios = rerun.filter((p) => byKey.has(p.cell_key)).map((p) => ({ cell: `${p.model} b${p.batch_size} ${p.engine}`, ratio: p.throughput / byKey.get(p.cell_key).throughput }));
const within10 = ratios.filter((r) => Math.abs(r.ratio - 1) <= 0.1).length;

// Each unordered pair once: its paired-round ratio in the rerun over the first run's.
const pairKey = (p) => `${p.a}\0${p.b}`;
const firstPairs = new Map(pairsFirst.filter((p) => p.a < p.b).map((p) => [pairKey(p), p]));
const pairChanges = pairsRerun.filter((p) => p.a < p.b && firstPairs.has(pairKey(p))).map((p) => {
  const was = firstPairs.get(pairKey(p));
  return { change: p.ratio / was.ratio, first: was, rerun: p, swapped: (was.ratio > 1) !== (p.ratio > 1) };
});
const within5 = pairChanges.filter((c) => Math.abs(c.change - 1) <= 0.05).length;

// #1 of each group in each run, and whether either run claimed it (the lead's interval leaving out 1).
const groupOf = (p) => `${p.model} b${p.batch_size} ${p.scenario} ${p.precision}`;
const tops = (rows) => {
  const best = new Map();
  for (const p of rows) if (!best.has(groupOf(p)) || best.get(groupOf(p)).throughput < p.throughput) best.set(groupOf(p), p);
  return best;
};
const [topFirst, topRerun] = [tops(first), tops(rerun)];
const groups = [...topFirst.keys()].filter((g) => topRerun.has(g) && first.filter((p) => groupOf(p) === g).length > 1);
const changes = groups.filter((g) => topFirst.get(g).engine !== topRerun.get(g).engine).map((g) => ({
  group: g,
  first: topFirst.get(g).engine,
  rerun: topRerun.get(g).engine,
  claimed: topFirst.get(g).lead_claim === 'fastest' || topRerun.get(g).lead_claim === 'fastest',
}));
const noisy = [first, rerun].map((rows) => (rows.length ? rows.filter((p) => p.noisy).length / rows.length : NaN));

const summary = {
  seconds,
  configs: CONFIGS,
  filters: { models: MODELS, engines: ENGINES, batches: BATCHES },
  profiles: ratios.length,
  rerun_over_first: { p10: quantile(ratios.map((r) => r.ratio), 0.1), median: quantile(ratios.map((r) => r.ratio), 0.5), p90: quantile(ratios.map((r) => r.ratio), 0.9), min: Math.min(...ratios.map((r) => r.ratio)), max: Math.max(...ratios.map((r) => r.ratio)), within_10pct: within10 / ratios.length },
  pairs: pairChanges.length,
  pair_ratio_change: {
    within_5pct: within5 / pairChanges.length,
    outside_5pct: pairChanges.filter((c) => Math.abs(c.change - 1) > 0.05).map((c) => ({ a: c.first.a, b: c.first.b, first: c.first.ratio, rerun: c.rerun.ratio, change: c.change })),
    swapped: pairChanges.filter((c) => c.swapped).length,
    swapped_with_both_intervals_clear: pairChanges.filter((c) => c.swapped && c.first.verdict !== 'tied' && c.rerun.verdict !== 'tied').length },
  groups: groups.length,
  top_changes: changes,
  top_changes_where_claimed: changes.filter((c) => c.claimed).length,
  noisy_share: { first: noisy[0], rerun: noisy[1] },
  per_profile: ratios,
};
mkdirSync(path.dirname(OUT), { recursive: true });
writeFileSync(OUT, `${JSON.stringify(summary, null, 2)}\n`);

process.stdout.write(`
bench:repeat: ${CONFIGS.join(', ')} twice in ${seconds.toFixed(0)} s; ${ratios.length} Profiles in both runs, ${pairChanges.length} pairs, ${groups.length} groups with more than one entry.
  rerun/first throughput: p10 ${f3(summary.rerun_over_first.p10)}, median ${f3(summary.rerun_over_first.median)}, p90 ${f3(summary.rerun_over_first.p90)} (range ${f3(summary.rerun_over_first.min)}-${f3(summary.rerun_over_first.max)}); within ±10%: ${pct(summary.rerun_over_first.within_10pct)}
  pair ratio rerun/first within ±5%: ${pct(summary.pair_ratio_change.within_5pct)}; pairs that swapped order: ${summary.pair_ratio_change.swapped} (with both runs' intervals clear of 1: ${summary.pair_ratio_change.swapped_with_both_intervals_clear})
  #1 changed in ${changes.length} of ${groups.length} groups${changes.length ? `: ${changes.map((c) => `${c.group} ${c.first} -> ${c.rerun}${c.claimed ? ' (claimed)' : ''}`).join('; ')}` : ''}; where a winner was claimed: ${summary.top_changes_where_claimed}
  noisy: ${pct(noisy[0])} first, ${pct(noisy[1])} rerun
target: rerun/first within ±10% for 90% of Profiles, pair ratios within ±5% for 90% of pairs, no claimed #1 changes, at most 10% noisy. Written to ${path.relative(root, OUT)}.
`);
