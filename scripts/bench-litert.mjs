#!/usr/bin/env node
// npm run bench:litert — the LiteRT and TensorFlow engines beside a bare loop over the same model, built the same way
// (scripts/tf_bare_loop.py, a plain process), in one interleaved run (rounds alternate which goes first):
//   bare    perf_counter_ns around blocks of consecutive calls: set_tensor + invoke() on a LiteRT Interpreter, or the
//           tf.function over a SavedModel's serving_default signature (XLA for tensorflow-xla)
//   ranked  what Profiles rank by: a single-stream session of the system under test (sut.closedLoop), its engine
//           timer around bind's call per query, in the worker
// Every figure is a per-batch p50 in µs at batch 1: the median over rounds of each round's p50. Timing figures: run it
// on a quiet machine. Needs `npm run build`, the TensorFlow extra (npx pbh doctor --fix --engine tensorflow) and the
// models of python/generate_tf_models.py (built here when missing). Each side runs in PROCESSES processes, a round
// timing one of each in turn: one process's memory layout alone moves a figure by a few percent, so one process
// against one other would compare layouts. Knobs: THREADS (1), PROCESSES (3), ROUNDS (2 x PROCESSES, so each process
// goes first once), BUDGET_S (1: seconds per figure per round; at least 10, at most 5000 runs), CASES (substring
// filter on the label).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { convertModel, converterFor, createRegistry, loadDataset } from '@pbh/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = path.join(root, '.venv', 'bin', 'python');
const models = path.join(root, '.cache', 'tf-models');
const THREADS = Number(process.env.THREADS ?? 1);
const PROCESSES = Number(process.env.PROCESSES ?? 3);
const ROUNDS = Number(process.env.ROUNDS ?? 2 * PROCESSES);
const BUDGET_US = Number(process.env.BUDGET_S ?? 1) * 1e6;
const RESIDENT_BATCHES = 8;
// Target: the ranked figure within 3% or 2 µs of the bare loop, whichever is more (TensorFlow: 3%).
const TOLERANCE_SHARE = 0.03;

execFileSync(python, [path.join(root, 'python', 'generate_tf_models.py')], { stdio: 'inherit' });
const workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-bench-litert-'));
const cases = [
  { label: 'litert digits_cnn fp32', engine: 'litert', options: { threads: THREADS }, file: 'digits_cnn.tflite', bare: ['litert'], floorUs: 2 },
  { label: 'litert digits_cnn int8', engine: 'litert', options: { threads: THREADS }, file: 'digits_cnn_int8.tflite', bare: ['litert'], floorUs: 2 },
  { label: 'tensorflow digits_cnn SavedModel', engine: 'tensorflow', options: { threads: THREADS }, file: 'digits_cnn_savedmodel', bare: ['tensorflow', '0'], floorUs: 0 },
  { label: 'tensorflow-xla digits_cnn SavedModel', engine: 'tensorflow', options: { threads: THREADS, jitCompile: true }, file: 'digits_cnn_savedmodel', bare: ['tensorflow', '1'], floorUs: 0 },
].filter((c) => !process.env.CASES || c.label.includes(process.env.CASES));

const p50 = (values) => {
  const sorted = Float64Array.from(values).sort();
  return sorted[(sorted.length - 1) >> 1];
};

function bareLoop(c) {
  const child = spawn(python, [path.join(root, 'scripts', 'tf_bare_loop.py'), c.bare[0], c.source, String(THREADS), ...c.bare.slice(1)], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`tf_bare_loop.py for ${c.label} exited`);
    return value;
  };
  const ready = next().then((line) => {
    if (line !== 'ready') throw new Error(`tf_bare_loop.py said ${line}`);
  });
  return {
    ready,
    async run(iters) {
      child.stdin.write(`${iters}\n`);
      const ns = Number(/median_ns=(\d+)/.exec(await next())?.[1]);
      if (!Number.isFinite(ns)) throw new Error(`cannot read the bare loop's median for ${c.label}`);
      return ns / 1e3;
    },
    close: () => child.stdin.end(),
  };
}

const registry = await createRegistry();
const dataset = await loadDataset({ kind: 'npy', inputs: { pixels: path.join(models, 'data', 'digits_nhwc_x.npy') } }, root);
const cells = [];
for (const c of cases) {
  const engine = registry.engines.get(c.engine);
  const availability = engine ? await engine.probe('worker') : { available: false, reason: 'not installed', fix: 'npm run build' };
  if (!availability.available) {
    console.log(`${c.label}: skipped (${availability.reason}; fix: ${availability.fix})`);
    continue;
  }
  c.source = path.join(models, 'models', c.file);
  const converted = await convertModel(c.source, converterFor(c.source), path.join(workDir, 'converted'));
  c.batches = Array.from({ length: RESIDENT_BATCHES }, (_, b) => ({ pixels: dataset.read(b, 1).inputs.pixels }));
  const workers = [];
  const bares = [];
  for (let p = 0; p < PROCESSES; p++) {
    const model = await engine.prepare({
      model: { name: c.label, path: converted.onnx_path, workDir }, batchSize: 1, device: 'cpu',
      options: engine.optionsSchema.parse(c.options), inputs: [{ name: 'pixels', dtype: 'float32', shape: [1, 8, 8, 1] }], seed: 0, precision: c.file.includes('int8') ? 'int8' : 'fp32', process: 'worker',
    });
    await model.library.load(c.batches);
    workers.push(model);
    const bare = bareLoop(c);
    await bare.ready;
    bares.push(bare);
  }
  const warm = p50((await workers[0].sut.closedLoop({ batches: c.batches.length, minQueries: 20, minDurationNs: 0 })).engineNs) / 1e3;
  c.iters = Math.round(Math.min(5000, Math.max(10, BUDGET_US / warm / 2)));
  cells.push({ c, version: availability.version, workers, bares, rounds: [] });
}

const load = [readFileSync('/proc/loadavg', 'utf8').trim()];
for (let r = 0; r < ROUNDS; r++) {
  for (const cell of cells) {
    const round = {};
    // Each round times one worker and one bare process, cycling, so every process is in as many rounds.
    const model = cell.workers[r % PROCESSES];
    const bare = cell.bares[r % PROCESSES];
    const runBare = async () => Object.assign(round, { bare: await bare.run(cell.c.iters) });
    const runPbh = async () => Object.assign(round, { ranked: p50((await model.sut.closedLoop({ batches: cell.c.batches.length, minQueries: cell.c.iters, minDurationNs: 0 })).engineNs) / 1e3 });
    if (r % 2 === 0) await runBare().then(runPbh);
    else await runPbh().then(runBare);
    cell.rounds.push(round);
    process.stderr.write(`round ${r + 1}/${ROUNDS} ${cell.c.label}\n`);
  }
  load.push(readFileSync('/proc/loadavg', 'utf8').trim());
}
for (const cell of cells) {
  for (const bare of cell.bares) bare.close();
  for (const model of cell.workers) await model.dispose();
}

const fmt = (v, digits = 1) => v.toFixed(digits);
const signed = (v, digits = 1) => (v >= 0 ? `+${fmt(v, digits)}` : fmt(v, digits));
const median = p50;
console.log(`\nbench:litert ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.cpus().length} logical CPUs), threads=${THREADS}, rounds=${ROUNDS}`);
console.log(`load average (1, 5, 15 min) at the start and after each round: ${load.map((l) => l.split(' ').slice(0, 3).join(' ')).join(' | ')}`);
console.log('per-batch p50 in µs at batch 1 (median over rounds); Δ = ranked − bare, paired per round\n');
console.log('| engine | case | bare loop µs | ranked (session engine p50) µs | Δ µs | Δ % | target |');
console.log('|---|---|---:|---:|---:|---:|---|');
let missed = 0;
for (const cell of cells) {
  const pick = (f) => median(cell.rounds.map(f));
  const bare = pick((r) => r.bare);
  const delta = pick((r) => r.ranked - r.bare);
  const ok = Math.abs(delta) <= Math.max(cell.c.floorUs, TOLERANCE_SHARE * bare);
  missed += ok ? 0 : 1;
  console.log(`| ${cell.c.engine} ${cell.version} | ${cell.c.label} | ${fmt(bare)} | ${fmt(pick((r) => r.ranked))} | ${signed(delta)} | ${signed((100 * delta) / bare)} | ${ok ? 'met' : 'MISSED'} |`);
}
console.log(`\ntarget: LiteRT within 3% or 2 µs of the bare loop, TensorFlow within 3%: ${missed ? `MISSED in ${missed} of ${cells.length}` : `met in all ${cells.length}`}`);
console.log('\nper round: Δ µs');
for (const cell of cells) console.log(`  ${cell.c.label}: ${cell.rounds.map((r) => signed(r.ranked - r.bare)).join(' ')}`);
console.log(`\nper process pair (rounds r, r + ${PROCESSES}, ...): median bare µs / ranked µs`);
for (const cell of cells) {
  const pairs = Array.from({ length: PROCESSES }, (_, p) => cell.rounds.filter((_, r) => r % PROCESSES === p));
  console.log(`  ${cell.c.label}: ${pairs.map((rs) => `${fmt(median(rs.map((r) => r.bare)))} / ${fmt(median(rs.map((r) => r.ranked)))}`).join(', ')}`);
}
