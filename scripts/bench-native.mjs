#!/usr/bin/env node
// npm run bench:native — for every native engine and case, in one interleaved run (rounds alternate which goes first):
//   tool        the runtime's own tool on the same model, batch and threads, in its own process:
//               OpenVINO benchmark_app (sync API, latency hint, one request: its median request latency);
//               TVM time_evaluator in a plain process (scripts/tvm_time_evaluator.py)
//   model-only  PBH's `bench`: the worker's own loop on one resident input, the runtime's own clock, no IPC
//   headline    what Profiles rank engines by: a single-stream session of the system under test (sut.closedLoop, as
//               the harness drives it) over the resident batches, its `engine` timer around the runtime's call per query
//   transport   a diagnostic a Profile keeps beside it (no target): the harness's probe after the sessions, one plain
//               `run` frame per resident batch, the harness's time - engine; and, for scale, of sut.infer calls, which
//               carry the batch there and the outputs back (the accuracy pass's door)
//   floor       a bare Node <-> Python one-line ping-pong (os.read/os.write, no PBH code): two process wake-ups
//   bytes       load_samples of a 64 MiB performance set (squeezenet batches), GB/s, beside a copy of as many bytes
//               into fresh memory within one process (its floor here: first-touch faults); a diagnostic
// Every figure is a per-batch p50 in µs: the median over rounds of each round's p50.
// Needs `npm run build`, the venv (npx pbh doctor --fix) and the bundled suite (npm run generate).
// Knobs: THREADS (2), ROUNDS (3), BUDGET_S (1: seconds per figure per round, which sets each case's iterations and
// runs from a short warm-up; at least 10, at most 5000), ENGINES (openvino,tvm), CASES (substring filter on the label).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
const ENGINES = (process.env.ENGINES ?? 'openvino,tvm').split(',');
const RESIDENT_BATCHES = 16;
const CHUNKS = 4;
// The performance set whose load_samples rate is measured (squeezenet batches, replicated).
const BYTES_SET = 64 << 20;

// Targets: the figures users see come from the runtime's own loop; the transport is reported, not targeted.
const MODEL_ONLY_MIN_RATIO = 0.97; // model-only throughput >= 0.97 of the tool's
const ENGINE_OVER_MODEL_ONLY_US = 5; // headline engine p50 within 5 µs of model-only p50 (the MLP's target) ...
const ENGINE_OVER_MODEL_ONLY_SHARE = 0.03; // ... or within 3% where the model is large enough for that to be more

const workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-bench-native-'));
const mlpPath = path.join(workDir, 'mlp_32_64_10.onnx');
execFileSync(python, [path.join(root, 'scripts', 'make_bench_mlp.py'), mlpPath]);

const cases = [
  { label: 'mlp 32-64-10 b1', model: mlpPath, data: null, shape: [1, 32] },
  { label: 'digits_cnn b1', model: 'models/digits_cnn.onnx', data: 'data/digits_x.npy', shape: [1, 1, 8, 8] },
  { label: 'digits_cnn b32', model: 'models/digits_cnn.onnx', data: 'data/digits_x.npy', shape: [32, 1, 8, 8] },
  { label: 'squeezenet b1', model: 'models/squeezenet.onnx', data: 'data/vision_x.npy', shape: [1, 3, 224, 224], bytesRate: true },
].filter((c) => !process.env.CASES || c.label.includes(process.env.CASES));

const p50 = (values) => {
  const sorted = Float64Array.from(values).sort();
  return sorted[(sorted.length - 1) >> 1];
};
const median = p50;

// The batches of a case: real samples where the suite has them, else a fixed pseudo-random normal fill.
async function residentBatches(c) {
  const [B, ...rest] = c.shape;
  const perBatch = rest.reduce((a, d) => a * d, B);
  if (!c.data) {
    let seed = 1;
    const uniform = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) + 1) / (2 ** 31 + 1);
    return Array.from({ length: RESIDENT_BATCHES }, () => ({
      input: { dtype: 'float32', dims: c.shape, data: Float32Array.from({ length: perBatch }, () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())) },
    }));
  }
  const ds = await loadDataset({ kind: 'npy', inputs: { input: path.join(suite, c.data) } }, root);
  const count = Math.min(RESIDENT_BATCHES, Math.floor(ds.size / B));
  return Array.from({ length: count }, (_, b) => ({ input: ds.read(b * B, B).inputs.input }));
}

// benchmark_app refuses -nthreads next to -hint, so both go in through -load_config: exactly the properties PBH sets.
function benchmarkApp(c, iters) {
  const config = path.join(workDir, 'benchmark_app.json');
  writeFileSync(config, JSON.stringify({ CPU: { PERFORMANCE_HINT: 'LATENCY', INFERENCE_NUM_THREADS: String(THREADS), INFERENCE_PRECISION_HINT: 'f32' } }));
  const out = execFileSync(path.join(root, '.venv', 'bin', 'benchmark_app'), [
    '-m', c.modelPath, '-d', 'CPU', '-api', 'sync', '-nireq', '1', '-niter', String(iters),
    '-load_config', config, '-shape', `input[${c.shape.join(',')}]`,
  ], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const m = /Median:\s+([\d.]+)\s*(us|ms)/.exec(out);
  if (!m) throw new Error(`cannot read benchmark_app's median latency from:\n${out.slice(-2000)}`);
  return Number(m[1]) * (m[2] === 'us' ? 1 : 1e3);
}

// One plain TVM process per case, built once, timing on request (scripts/tvm_time_evaluator.py).
function timeEvaluator(c) {
  const child = spawn(python, [path.join(root, 'scripts', 'tvm_time_evaluator.py'), c.modelPath, c.shape.join(','), String(THREADS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, TVM_NUM_THREADS: String(THREADS) },
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`tvm_time_evaluator.py for ${c.label} exited`);
    return value;
  };
  const ready = next().then((line) => {
    if (line !== 'ready') throw new Error(`tvm_time_evaluator.py said ${line}`);
  });
  return {
    ready,
    async run(iters) {
      child.stdin.write(`${iters}\n`);
      const ns = Number(/median_ns=(\d+)/.exec(await next())?.[1]);
      if (!Number.isFinite(ns)) throw new Error(`cannot read time_evaluator's median for ${c.label}`);
      return ns / 1e3;
    },
    close: () => child.stdin.end(),
  };
}

/**
 * One round of PBH's figures for a prepared model: model-only, the in-worker session (headline), the transport probe
 * and predict() transport, measured in CHUNKS interleaved slices so that the host's slow drifts land on all alike.
 */
async function pbhRound(c, model) {
  const K = c.resident;
  const slice = Math.max(3, Math.ceil(c.iters / CHUNKS));
  await model.sut.closedLoop({ batches: K, minQueries: Math.max(3, Math.min(100, Math.round(c.iters / 10))), minDurationNs: 0 });
  const modelOnly = [];
  const headline = [];
  const transport = [];
  for (let chunk = 0; chunk < CHUNKS; chunk++) {
    modelOnly.push(...(await model.probes.modelOnly(c.batches[0], slice)).iterationNs);
    headline.push(...(await model.sut.closedLoop({ batches: K, minQueries: slice, minDurationNs: 0 })).engineNs);
    for (let i = 0; i < slice; i++) {
      const start = process.hrtime.bigint();
      const { engineNs } = await model.sut.issue(i % K);
      transport.push(Number(process.hrtime.bigint() - start - engineNs));
    }
  }
  const inferTransport = [];
  for (let i = 0; i < Math.max(5, c.iters / 5); i++) {
    const start = process.hrtime.bigint();
    const { engineNs } = await model.sut.infer(c.batches[i % K]);
    inferTransport.push(Number(process.hrtime.bigint() - start - engineNs));
  }
  const us = (values) => p50(values) / 1e3;
  return { modelOnly: us(modelOnly), headline: us(headline), transport: us(transport), inferTransport: us(inferTransport) };
}

/** load_samples of about 64 MiB made of this case's batches: GB/s. */
async function bytesRate(c, model) {
  const perBatch = c.batches[0].input.data.byteLength;
  const copies = Math.ceil(BYTES_SET / perBatch);
  const big = Array.from({ length: copies }, (_, i) => c.batches[i % c.batches.length]);
  const start = process.hrtime.bigint();
  await model.library.load(big);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await model.library.load(c.batches.slice(0, c.resident));
  return (copies * perBatch) / seconds / 1e9;
}

/**
 * GB/s of a copy of BYTES_SET into freshly allocated memory in this process: the first touch of new pages, which
 * any transfer into a new resident set pays on the receiving side, whatever carries the bytes.
 */
function freshCopyRate() {
  const source = Buffer.alloc(BYTES_SET, 1);
  const start = process.hrtime.bigint();
  source.copy(Buffer.allocUnsafeSlow(BYTES_SET));
  return BYTES_SET / (Number(process.hrtime.bigint() - start) / 1e9) / 1e9;
}

/** A bare Node <-> Python line ping-pong, the two wake-ups any pipe round trip costs here: p50 µs. */
async function pingPongFloor(iterations) {
  const child = spawn(python, ['-c', 'import os\nwhile True:\n    b = os.read(0, 65536)\n    if not b: break\n    os.write(1, b"{}\\n")'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let wake = () => undefined;
  child.stdout.on('data', () => wake());
  const line = Buffer.from('{"id":1,"cmd":"run","index":0}\n');
  const times = [];
  for (let i = 0; i < iterations + 100; i++) {
    const start = process.hrtime.bigint();
    await new Promise((resolve) => {
      wake = resolve;
      child.stdin.write(line);
    });
    if (i >= 100) times.push(Number(process.hrtime.bigint() - start));
  }
  child.stdin.end();
  return p50(times) / 1e3;
}

const registry = await createRegistry();
const tools = {
  openvino: { options: { hint: 'latency', threads: THREADS }, tool: 'benchmark_app', start: (c) => ({ ready: Promise.resolve(), run: (iters) => benchmarkApp(c, iters), close() {} }) },
  tvm: { options: { threads: THREADS }, tool: 'time_evaluator', start: timeEvaluator },
};

// Prepare everything first (compiles are not what this measures), then interleave.
const cells = [];
for (const name of ENGINES) {
  const spec = tools[name];
  const engine = registry.engines.get(name);
  const availability = engine ? await engine.probe('worker') : { available: false, reason: 'not installed' };
  if (!availability.available) {
    console.log(`${name}: skipped (${availability.reason})`);
    continue;
  }
  for (const template of cases) {
    const c = { ...template, modelPath: path.isAbsolute(template.model) ? template.model : path.join(suite, template.model) };
    if (!existsSync(c.modelPath)) throw new Error(`${c.modelPath} is missing: run npm run generate`);
    c.batches = await residentBatches(c);
    const model = await engine.prepare({
      model: { name: c.label, path: c.modelPath, workDir }, batchSize: c.shape[0], device: 'cpu',
      options: engine.optionsSchema.parse(spec.options), inputs: [{ name: 'input', dtype: 'float32', shape: c.shape }], seed: 0, precision: 'fp32', process: 'worker',
    });
    const warmUs = p50((await model.probes.modelOnly(c.batches[0], 5)).iterationNs) / 1e3;
    c.iters = Math.round(Math.min(5000, Math.max(10, BUDGET_US / warmUs)));
    // A session runs every resident batch at least once: a slow case keeps fewer, so a slice stays its own length.
    c.resident = Math.min(c.batches.length, Math.max(2, Math.ceil(c.iters / CHUNKS)));
    await model.library.load(c.batches.slice(0, c.resident));
    // The tool builds before anything is measured: a TVM build running beside a measurement would slow it.
    const tool = spec.start(c);
    await tool.ready;
    cells.push({ name, engine: availability.version, c, model, tool, toolName: spec.tool, rounds: [], gbps: [] });
  }
}

const load = [readFileSync('/proc/loadavg', 'utf8').trim()];
const floors = [];
const freshCopies = [];
for (let r = 0; r < ROUNDS; r++) {
  floors.push(await pingPongFloor(2000));
  freshCopies.push(freshCopyRate());
  for (const cell of cells) {
    const round = {};
    const runTool = async () => Object.assign(round, { tool: await cell.tool.run(cell.c.iters) });
    const runPbh = async () => Object.assign(round, await pbhRound(cell.c, cell.model));
    if (r % 2 === 0) await runTool().then(runPbh);
    else await runPbh().then(runTool);
    cell.rounds.push(round);
    if (cell.c.bytesRate) cell.gbps.push(await bytesRate(cell.c, cell.model));
    process.stderr.write(`round ${r + 1}/${ROUNDS} ${cell.name} ${cell.c.label}\n`);
  }
  load.push(readFileSync('/proc/loadavg', 'utf8').trim());
}
for (const cell of cells) {
  cell.tool.close();
  await cell.model.dispose();
}

const fmt = (v, digits = 1) => v.toFixed(digits);
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`\nbench:native ${new Date().toISOString().slice(0, 10)}, ${cpu} (${os.cpus().length} logical CPUs), threads=${THREADS}, rounds=${ROUNDS}, node ${process.version}`);
console.log(`load average (1, 5, 15 min) at the start and after each round: ${load.map((l) => l.split(' ').slice(0, 3).join(' ')).join(' | ')}`);
console.log('per-batch p50 in µs (median over rounds); ratio = tool time / model-only time (the throughput ratio)\n');
console.log('| engine | case | tool | tool µs | model-only µs | model-only/tool ≥ 0.97 | headline µs: session engine p50 (− model-only ≤ 5 or 3%) | transport µs: run probe, harness − engine (diagnostic) | infer transport µs (diagnostic) | targets |');
console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---|');
// Comparisons are paired per round (tool and PBH measured next to each other), then the median over rounds.
const derived = {
  ratio: (r) => r.tool / r.modelOnly,
  headlineOver: (r) => r.headline - r.modelOnly,
  transport: (r) => r.transport,
};
let missedAny = false;
for (const cell of cells) {
  const pick = (f) => median(cell.rounds.map(f));
  const [tool, modelOnly, headline, transport, inferTransport] = ['tool', 'modelOnly', 'headline', 'transport', 'inferTransport'].map((key) => pick((r) => r[key]));
  const ratio = pick(derived.ratio);
  const headlineOver = pick(derived.headlineOver);
  const overLimit = Math.max(ENGINE_OVER_MODEL_ONLY_US, ENGINE_OVER_MODEL_ONLY_SHARE * modelOnly);
  const checks = [
    ['model-only', ratio >= MODEL_ONLY_MIN_RATIO],
    ['headline', headlineOver <= overLimit],
  ];
  const missed = checks.filter(([, ok]) => !ok).map(([what]) => what);
  missedAny ||= missed.length > 0;
  const signed = (v) => (v >= 0 ? `+${fmt(v)}` : fmt(v));
  console.log(
    `| ${cell.name} ${cell.engine} | ${cell.c.label} | ${cell.toolName} | ${fmt(tool)} | ${fmt(modelOnly)} | ${fmt(ratio, 3)} | ${fmt(headline)} (${signed(headlineOver)}) | ${fmt(transport)} | ${fmt(inferTransport)} | ${missed.length ? `missed: ${missed.join(', ')}` : 'met'} |`,
  );
}
const floor = median(floors);
console.log(`\nbare Node ↔ Python ping-pong (the two wake-ups any round trip pays here): p50 ${fmt(floor)} µs (rounds: ${floors.map((f) => fmt(f)).join(' ')})`);
for (const cell of cells.filter((x) => x.gbps.length)) {
  console.log(`load_samples of ${BYTES_SET >> 20} MiB (${cell.c.label} batches), ${cell.name}: ${fmt(median(cell.gbps), 2)} GB/s (rounds: ${cell.gbps.map((g) => fmt(g, 2)).join(' ')})`);
}
console.log(`a copy of ${BYTES_SET >> 20} MiB into fresh memory in one process (the first touch any new resident set pays): ${fmt(median(freshCopies), 2)} GB/s (rounds: ${freshCopies.map((g) => fmt(g, 2)).join(' ')})`);
console.log(`\nThe engine tolerance is 5 µs, or 3% of model-only where that is more. targets: ${missedAny ? 'MISSED (see the last column and the lines above)' : 'all met'}`);
console.log('\nper round: model-only/tool | headline − model-only µs | run transport µs');
for (const cell of cells) {
  const list = (f, digits = 1) => cell.rounds.map((round) => fmt(f(round), digits)).join(' ');
  console.log(`  ${cell.name} ${cell.c.label}: ${list(derived.ratio, 3)} | ${list(derived.headlineOver)} | ${list(derived.transport)}`);
}
