#!/usr/bin/env node
// npm run bench:pytorch — each PyTorch engine (pytorch, torchscript, torch-compile) beside a bare torch.utils.benchmark
// loop on the same module and input (scripts/torch_bare_loop.py, a plain process), in one interleaved run (rounds
// alternate which goes first):
//   bare       torch.utils.benchmark.Timer around m(x), one timed call per entry, the module built as the engine builds it
//   ranked     what Profiles rank by: a single-stream session of the system under test (sut.closedLoop), its engine
//              timer around the module's call per query, in the worker
//   model-only the engine's own probe (the same Timer inside the worker)
//   compile    the engine's compile_ms (onnx2torch + trace/freeze or torch.compile and its first calls), outside any session
// Every figure is a per-batch p50 in µs: the median over rounds of each round's p50.
// Needs `npm run build`, the venv with torch (npx pbh doctor --fix --engine pytorch) and the suite (npm run generate).
// Knobs: THREADS (2), ROUNDS (3), BUDGET_S (1: seconds per figure per round; at least 10, at most 5000 runs),
// ENGINES (pytorch,torchscript,torch-compile), CASES (substring filter on the label).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createRegistry, loadDataset } from '@pbh/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const suite = path.join(root, '.cache', 'suite');
const python = path.join(root, '.venv', 'bin', 'python');
const THREADS = Number(process.env.THREADS ?? 2);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BUDGET_US = Number(process.env.BUDGET_S ?? 1) * 1e6;
const ENGINES = (process.env.ENGINES ?? 'pytorch,torchscript,torch-compile').split(',');
const MODES = { pytorch: 'eager', torchscript: 'torchscript', 'torch-compile': 'compile' };
const RESIDENT_BATCHES = 8;
// Target: the ranked figure within 3% or 2 µs of the bare loop, whichever is more.
const TOLERANCE_US = 2;
const TOLERANCE_SHARE = 0.03;

const workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-bench-pytorch-'));
const mlpPath = path.join(workDir, 'mlp_32_64_10.onnx');
execFileSync(python, [path.join(root, 'scripts', 'make_bench_mlp.py'), mlpPath]);

const cases = [
  { label: 'mlp 32-64-10 b1', model: mlpPath, data: null, shape: [1, 32] },
  { label: 'mlp 32-64-10 b32', model: mlpPath, data: null, shape: [32, 32] },
  { label: 'digits_resnet b1', model: 'models/digits_resnet.onnx', data: 'data/digits_x.npy', shape: [1, 1, 8, 8] },
  { label: 'digits_resnet b32', model: 'models/digits_resnet.onnx', data: 'data/digits_x.npy', shape: [32, 1, 8, 8] },
].filter((c) => !process.env.CASES || c.label.includes(process.env.CASES));

const p50 = (values) => {
  const sorted = Float64Array.from(values).sort();
  return sorted[(sorted.length - 1) >> 1];
};
const median = p50;

async function residentBatches(c) {
  const [B, ...rest] = c.shape;
  const perBatch = rest.reduce((a, d) => a * d, B);
  if (!c.data) {
    let seed = 1;
    const uniform = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) + 1) / (2 ** 31 + 1);
    return Array.from({ length: RESIDENT_BATCHES }, () => ({ input: { dtype: 'float32', dims: c.shape, data: Float32Array.from({ length: perBatch }, () => uniform() - 0.5) } }));
  }
  const ds = await loadDataset({ kind: 'npy', inputs: { input: path.join(suite, c.data) } }, root);
  return Array.from({ length: Math.min(RESIDENT_BATCHES, Math.floor(ds.size / B)) }, (_, b) => ({ input: ds.read(b * B, B).inputs.input }));
}

function bareLoop(c, mode) {
  const child = spawn(python, [path.join(root, 'scripts', 'torch_bare_loop.py'), c.modelPath, c.shape.join(','), String(THREADS), mode], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`torch_bare_loop.py for ${c.label} (${mode}) exited`);
    return value;
  };
  const ready = next().then((line) => {
    if (line !== 'ready') throw new Error(`torch_bare_loop.py said ${line}`);
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

async function pbhRound(c, model) {
  const ranked = (await model.sut.closedLoop({ batches: c.resident, minQueries: c.iters, minDurationNs: 0 })).engineNs;
  const modelOnly = (await model.probes.modelOnly(c.batches[0], c.iters)).iterationNs;
  return { ranked: p50(ranked) / 1e3, modelOnly: p50(modelOnly) / 1e3 };
}

const registry = await createRegistry();
const cells = [];
for (const name of ENGINES) {
  const engine = registry.engines.get(name);
  const availability = engine ? await engine.probe('worker') : { available: false, reason: 'not installed', fix: 'npm run build' };
  if (!availability.available) {
    console.log(`${name}: skipped (${availability.reason}; fix: ${availability.fix})`);
    continue;
  }
  for (const template of cases) {
    const c = { ...template, modelPath: path.isAbsolute(template.model) ? template.model : path.join(suite, template.model) };
    if (!existsSync(c.modelPath)) throw new Error(`${c.modelPath} is missing: run npm run generate`);
    c.batches = await residentBatches(c);
    const model = await engine.prepare({
      model: { name: c.label, path: c.modelPath, workDir }, batchSize: c.shape[0], device: 'cpu',
      options: engine.optionsSchema.parse({ threads: THREADS }), inputs: [{ name: 'input', dtype: 'float32', shape: c.shape }], seed: 0, precision: 'fp32', process: 'worker',
    });
    const warmUs = p50((await model.probes.modelOnly(c.batches[0], 5)).iterationNs) / 1e3;
    c.iters = Math.round(Math.min(5000, Math.max(10, BUDGET_US / warmUs / 3)));
    c.resident = c.batches.length;
    await model.library.load(c.batches);
    // The bare loop builds before anything is measured: a torch.compile beside a measurement would slow it.
    const bare = bareLoop(c, MODES[name]);
    await bare.ready;
    cells.push({ name, version: availability.version, c, model, bare, compileMs: model.compileMs, rounds: [] });
  }
}

const load = [readFileSync('/proc/loadavg', 'utf8').trim()];
for (let r = 0; r < ROUNDS; r++) {
  for (const cell of cells) {
    const round = {};
    const runBare = async () => Object.assign(round, { bare: await cell.bare.run(cell.c.iters) });
    const runPbh = async () => Object.assign(round, await pbhRound(cell.c, cell.model));
    if (r % 2 === 0) await runBare().then(runPbh);
    else await runPbh().then(runBare);
    cell.rounds.push(round);
    process.stderr.write(`round ${r + 1}/${ROUNDS} ${cell.name} ${cell.c.label}\n`);
  }
  load.push(readFileSync('/proc/loadavg', 'utf8').trim());
}
for (const cell of cells) {
  cell.bare.close();
  await cell.model.dispose();
}

const fmt = (v, digits = 1) => v.toFixed(digits);
const signed = (v, digits = 1) => (v >= 0 ? `+${fmt(v, digits)}` : fmt(v, digits));
console.log(`\nbench:pytorch ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.cpus().length} logical CPUs), threads=${THREADS}, rounds=${ROUNDS}`);
console.log(`load average (1, 5, 15 min) at the start and after each round: ${load.map((l) => l.split(' ').slice(0, 3).join(' ')).join(' | ')}`);
console.log('per-batch p50 in µs (median over rounds); Δ = ranked − bare, paired per round\n');
console.log('| engine | case | bare torch.utils.benchmark µs | ranked (session engine p50) µs | Δ µs | Δ % | model-only µs | compile ms | target |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---|');
let missed = 0;
for (const cell of cells) {
  const pick = (f) => median(cell.rounds.map(f));
  const bare = pick((r) => r.bare);
  const ranked = pick((r) => r.ranked);
  const delta = pick((r) => r.ranked - r.bare);
  const ok = Math.abs(delta) <= Math.max(TOLERANCE_US, TOLERANCE_SHARE * bare);
  missed += ok ? 0 : 1;
  console.log(`| ${cell.name} ${cell.version} | ${cell.c.label} | ${fmt(bare)} | ${fmt(ranked)} | ${signed(delta)} | ${signed((100 * delta) / bare)} | ${fmt(pick((r) => r.modelOnly))} | ${fmt(cell.compileMs, 0)} | ${ok ? 'met' : 'MISSED'} |`);
}
console.log(`\ntarget: the ranked figure within 3% or 2 µs of the bare loop (whichever is more): ${missed ? `MISSED in ${missed} of ${cells.length}` : `met in all ${cells.length}`}`);
console.log('\nper round: Δ µs');
for (const cell of cells) console.log(`  ${cell.name} ${cell.c.label}: ${cell.rounds.map((r) => signed(r.ranked - r.bare)).join(' ')}`);
