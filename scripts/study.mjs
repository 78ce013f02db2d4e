#!/usr/bin/env node
// `npm run study`: the compression study. Installs and builds what is missing (scripts/ensure.mjs), generates the
// bundled suite (the three trained families), prunes each family with pbh prune (OBC and magnitude; 25%, 50% and 75%
// unstructured; 1:2, 2:4, 4:8) and quantizes with pbh quantize (the dense model static, dynamic and NNCF; each 2:4
// model static) into .cache/study, then runs configs/compression-study.yaml (dense fp32, bf16, INT8, pruned and
// 2:4 + INT8 x every engine at batch 1 and 32; STUDY_CONFIG=configs/sparsity-study.yaml runs the sparsity sweep
// instead). Each step is skipped when a stamp says the same model, code and flags made its files.
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
const CALIBRATION = path.join('.cache', 'suite', 'data', 'digits_calibration_x.npy');
const FLAGS = ['--method', 'obc,magnitude', '--unstructured', '0.25,0.5,0.75', '--nm', '1:2,2:4,4:8', '--calibration', CALIBRATION];
const QUANTIZE_DENSE = ['--method', 'static,dynamic,nncf', '--calibration', CALIBRATION];
const QUANTIZE_PRUNED = ['--method', 'static', '--calibration', CALIBRATION];
const CONFIG = process.env.STUDY_CONFIG ?? path.join('configs', 'compression-study.yaml');
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

/** sha256 over the input model, the Python package's sources and the flags: what decides the written files' bytes. */
function stampOf(model, pkg, flags) {
  const h = createHash('sha256').update(readFileSync(path.join(root, model)));
  const dir = path.join(root, 'python', pkg);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.py')).sort()) h.update(file).update(readFileSync(path.join(dir, file)));
  return h.update(flags.join(' ')).digest('hex');
}

/** Runs `pbh COMMAND model ...flags` unless its stamp file says the same inputs made the files already. */
function stamped(title, stampName, command, model, pkg, flags) {
  const stampFile = path.join(root, out, `${stampName}.stamp`);
  const stamp = stampOf(model, pkg, flags);
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === stamp) {
    process.stdout.write(`\n== ${title}: up to date (${path.relative(root, stampFile)})\n`);
    return;
  }
  step(title, ...pbh(command, model, '--out', out, ...flags));
  writeFileSync(stampFile, `${stamp}\n`);
}

step('install and build', 'node', [path.join('scripts', 'ensure.mjs'), 'demo']);
step('generate the bundled suite', path.join('.venv', 'bin', 'python'), [path.join('python', 'generate_suite.py')]);
for (const family of FAMILIES) {
  const model = path.join('.cache', 'suite', 'models', `${family}.onnx`);
  stamped(`prune ${family}`, family, 'prune', model, 'prune', FLAGS);
  stamped(`quantize ${family}`, `${family}.quantize`, 'quantize', model, 'quantize', QUANTIZE_DENSE);
  for (const method of ['obc', 'magnitude']) {
    // 2:4 + INT8: the pruned file quantized; symmetric int8 weights keep its zeros (pbh inspect checks the pattern).
    const pruned = path.join(out, `${family}.${method}.2of4.onnx`);
    stamped(`quantize ${family} ${method} 2:4`, `${family}_${method}_2of4.quantize`, 'quantize', pruned, 'quantize', [...QUANTIZE_PRUNED, '--name', `${family}_${method}_2of4`]);
  }
}
const measureStart = Date.now();
// Cells that fail are recorded as failed Profiles and shown in the summary; the study goes on.
step(`run ${CONFIG}`, ...pbh('run', CONFIG, '--db', db, ...process.argv.slice(2)), { allowFail: true });
const secs = (ms) => `${Math.round(ms / 1000)} s`;
process.stdout.write(`
Study done in ${secs(Date.now() - started)} (runs: ${secs(Date.now() - measureStart)}). Profiles are in ${db}.
Try:
  npx pbh query "SELECT model, engine_entry, batch_size, round(throughput_sps) AS sps, round(top1 * 100, 1) AS top1 FROM leaderboard WHERE model LIKE 'digits_resnet%' ORDER BY batch_size, engine_entry, model" --db ${db}
  npx pbh query "SELECT model_name, sparsity_kind, sparsity_target, sparsity_actual, sparsity_n, sparsity_m FROM profiles p JOIN models m USING (model_sha256) GROUP BY ALL ORDER BY 1" --db ${db}
`);
