#!/usr/bin/env node
// `npm run study`: the paper's sparsity study. Installs and builds what is missing (scripts/ensure.mjs), generates the
// bundled suite (the three trained families), prunes each family with pbh prune (OBC and magnitude; 25% and 75%
// unstructured; 1:2, 2:4, 4:8) into .cache/study, then runs configs/sparsity-study.yaml (dense + every variant x every
// engine at batch 1 and 32). Pruning is skipped when a stamp says the same model, pruning code and flags made the files.
// Extra arguments go to pbh run (e.g. --only KEY, --resume); PBH_DB names the database (default results/pbh.duckdb).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const db = process.env.PBH_DB ?? 'results/pbh.duckdb';
const out = path.join('.cache', 'study');
const FAMILIES = ['digits_mobilenet_v2', 'digits_resnet', 'digits_vit'];
const FLAGS = ['--method', 'obc,magnitude', '--unstructured', '0.25,0.75', '--nm', '1:2,2:4,4:8',
  '--calibration', path.join('.cache', 'suite', 'data', 'digits_calibration_x.npy')];
const started = Date.now();

function step(title, cmd, args, { allowFail = false } = {}) {
  process.stdout.write(`\n== ${title}\n$ ${[cmd, ...args].join(' ')}\n`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0 && !allowFail) {
    process.stderr.write(`study: "${title}" failed (exit ${r.status ?? r.signal}). Fix the error above and run npm run study again.\n`);
    process.exit(r.status ?? 1);
  }
  return r.status;
}

const pbh = (...args) => ['node', [path.join('packages', 'core', 'dist', 'cli', 'main.js'), ...args]];

/** sha256 over the dense model, python/prune's sources and the flags: what decides the pruned files' bytes. */
function pruneStamp(model) {
  const h = createHash('sha256').update(readFileSync(path.join(root, model)));
  const pruneDir = path.join(root, 'python', 'prune');
  for (const file of readdirSync(pruneDir).filter((f) => f.endsWith('.py')).sort()) h.update(file).update(readFileSync(path.join(pruneDir, file)));
  return h.update(FLAGS.join(' ')).digest('hex');
}

step('install and build', 'node', [path.join('scripts', 'ensure.mjs'), 'demo']);
step('generate the bundled suite', path.join('.venv', 'bin', 'python'), [path.join('python', 'generate_suite.py')]);
for (const family of FAMILIES) {
  const model = path.join('.cache', 'suite', 'models', `${family}.onnx`);
  const stampFile = path.join(root, out, `${family}.stamp`);
  const stamp = pruneStamp(model);
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === stamp) {
    process.stdout.write(`\n== prune ${family}: up to date (${path.relative(root, stampFile)})\n`);
    continue;
  }
  step(`prune ${family}`, ...pbh('prune', model, '--out', out, ...FLAGS));
  writeFileSync(stampFile, `${stamp}\n`);
}
const measureStart = Date.now();
// Cells that fail are recorded as failed Profiles and shown in the summary; the study goes on.
step('run configs/sparsity-study.yaml', ...pbh('run', 'configs/sparsity-study.yaml', '--db', db, ...process.argv.slice(2)), { allowFail: true });
const secs = (ms) => `${Math.round(ms / 1000)} s`;
process.stdout.write(`
Study done in ${secs(Date.now() - started)} (runs: ${secs(Date.now() - measureStart)}). Profiles are in ${db}.
Try:
  npx pbh query "SELECT model, engine_entry, batch_size, round(throughput_sps) AS sps, round(top1 * 100, 1) AS top1 FROM leaderboard WHERE model LIKE 'digits_resnet%' ORDER BY batch_size, engine_entry, model" --db ${db}
  npx pbh query "SELECT model_name, sparsity_kind, sparsity_target, sparsity_actual, sparsity_n, sparsity_m FROM profiles p JOIN models m USING (model_sha256) GROUP BY ALL ORDER BY 1" --db ${db}
`);
