#!/usr/bin/env node
// npm run bench:overhead — ONNX Runtime's ranked figure against a bare loop over the same onnxruntime version, side by
// side and interleaved in one run (rounds alternate which goes first), same model, batch and threads:
//   worker door (the default): PBH's session loop (runLoop over the engine's closed loop in its Python worker)
//                              against a bare Python loop over onnxruntime (scripts/ort_bare_loop.py)
//   harness door:              PBH's session loop over onnxruntime-node in this process against a bare Node loop
// Every figure is per query, the median over rounds of each round's p50 and mean. Target (worker door, what is
// ranked): p50 and mean within 3% or 1 µs, whichever is larger, of the bare Python loop.
// Needs `npm run build`, the venv and the bundled suite. Knobs: THREADS (2), ROUNDS (5), QUERIES (5000), CASES.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { PerformanceTracker, runLoop } from '@pbh/core';
import { onnxRuntimeEngine } from '@pbh/engine-onnx';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const suite = path.join(root, '.cache', 'suite');
const python = path.join(root, '.venv', 'bin', 'python');
const THREADS = Number(process.env.THREADS ?? 2);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const QUERIES = Number(process.env.QUERIES ?? 5000);
const BATCHES = 8;
const TOLERANCE_SHARE = 0.03;
const TOLERANCE_US = 1;

const workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-bench-overhead-'));
const mlpPath = path.join(workDir, 'mlp_32_64_10.onnx');
execFileSync(python, [path.join(root, 'scripts', 'make_bench_mlp.py'), mlpPath]);
const cases = [
  { label: 'mlp 32-64-10 b1', model: mlpPath, shape: [1, 32] },
  { label: 'digits_cnn b1', model: path.join(suite, 'models', 'digits_cnn.onnx'), shape: [1, 1, 8, 8] },
].filter((c) => !process.env.CASES || c.label.includes(process.env.CASES));

const never = { check() {}, run: (p) => p, race: (p) => p };
const hr = process.hrtime.bigint;
const p50 = (values) => Float64Array.from(values).sort()[(values.length - 1) >> 1];
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const median = p50;
const options = onnxRuntimeEngine.optionsSchema.parse({ intraOpNumThreads: THREADS });

function randomBatches(shape) {
  let seed = 1;
  const uniform = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) + 1) / (2 ** 31 + 1);
  const n = shape.reduce((a, d) => a * d, 1);
  return Array.from({ length: BATCHES }, () => ({ input: { dtype: 'float32', dims: shape, data: Float32Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())) } }));
}

function barePython(c) {
  const child = spawn(python, [path.join(root, 'scripts', 'ort_bare_loop.py'), c.model, c.shape.join(','), String(THREADS), String(BATCHES)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => (await lines.next()).value ?? '';
  const ready = next().then((l) => { if (l !== 'ready') throw new Error(`ort_bare_loop.py said ${l}`); });
  return {
    ready,
    async run(n) {
      child.stdin.write(`${n}\n`);
      const m = /p50_ns=(\d+) mean_ns=(\d+)/.exec(await next());
      return { p50: Number(m[1]) / 1e3, mean: Number(m[2]) / 1e3 };
    },
    close: () => child.stdin.end(),
  };
}

/** The harness's own session loop, as a cell runs it: one session of n queries; its engine p50 and mean. */
async function pbhSession(model, n) {
  const tracker = new PerformanceTracker([]);
  const metricContext = { pid: model.runsIn.pid, sampleRssBytes: async () => 0, cpuTimeUs: async () => 0 };
  const r = await runLoop({ sut: model.sut, residentBatches: BATCHES, preprocessNs: new Float64Array(BATCHES), batchSize: 1, sessions: 1, minSessionNs: 0, minSessionQueries: n, tracker, metricContext, deadline: never, clock: hr });
  const engine = Array.from(r.raw.engine.values);
  return { p50: p50(engine) / 1e3, mean: mean(engine) / 1e3, transport: p50(Array.from(r.raw.transport.values)) / 1e3 };
}

async function prepare(c, process) {
  const model = await onnxRuntimeEngine.prepare({ model: { name: c.label, path: c.model, workDir }, batchSize: 1, device: 'cpu', options, inputs: [], seed: 0, precision: 'fp32', process });
  await model.library.load(c.batches);
  await model.sut.closedLoop({ batches: BATCHES, minQueries: 500, minDurationNs: 0 });
  return model;
}

/** A bare onnxruntime-node loop on feeds wrapped once; its session is released after, so one pool spins at a time. */
async function bareNode(c, n) {
  const session = await ort.InferenceSession.create(c.model, { executionProviders: ['cpu'], intraOpNumThreads: THREADS, interOpNumThreads: 0, graphOptimizationLevel: 'all', logSeverityLevel: 3 });
  const feeds = c.batches.map((b) => ({ [session.inputNames[0]]: new ort.Tensor('float32', b.input.data, b.input.dims) }));
  for (let i = 0; i < 500; i++) await session.run(feeds[i % BATCHES]);
  const times = [];
  for (let i = 0; i < n; i++) {
    const start = hr();
    await session.run(feeds[i % BATCHES]);
    times.push(Number(hr() - start));
  }
  await session.release();
  return { p50: p50(times) / 1e3, mean: mean(times) / 1e3 };
}

const rows = [];
for (const c of cases) {
  if (!existsSync(c.model)) throw new Error(`${c.model} is missing: run npm run generate`);
  c.batches = randomBatches(c.shape);
  const bare = barePython(c);
  await bare.ready;
  await bare.run(500);
  const worker = await prepare(c, 'worker');
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round = {};
    const sides = [async () => (round.bare = await bare.run(QUERIES)), async () => (round.pbh = await pbhSession(worker, QUERIES))];
    for (const side of r % 2 === 0 ? sides : sides.reverse()) await side();
    // The harness door: its own session and a bare Node loop, one onnxruntime-node session alive at a time.
    const inProcess = await prepare(c, 'harness');
    round.harness = await pbhSession(inProcess, QUERIES);
    await inProcess.dispose();
    round.node = await bareNode(c, QUERIES);
    rounds.push(round);
    process.stderr.write(`round ${r + 1}/${ROUNDS} ${c.label}\n`);
  }
  bare.close();
  await worker.dispose();
  rows.push({ c, rounds });
}

const fmt = (v, d = 2) => v.toFixed(d);
console.log(`\nbench:overhead ${new Date().toISOString().slice(0, 10)}, ${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.cpus().length} logical CPUs), onnxruntime ${ort.env.versions.common}, threads=${THREADS}, rounds=${ROUNDS}, ${QUERIES} queries a round`);
console.log('per query, µs: median over rounds of each round\'s p50 / mean\n');
console.log('| case | bare Python loop | PBH worker door (ranked) | ranked − bare (limit) | transport (diagnostic) | bare Node loop | PBH harness door | target |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
let missed = false;
for (const { c, rounds } of rows) {
  const pick = (f) => median(rounds.map(f));
  const bare = { p50: pick((r) => r.bare.p50), mean: pick((r) => r.bare.mean) };
  const pbh = { p50: pick((r) => r.pbh.p50), mean: pick((r) => r.pbh.mean) };
  const over = { p50: pick((r) => r.pbh.p50 - r.bare.p50), mean: pick((r) => r.pbh.mean - r.bare.mean) };
  const limit = Math.max(TOLERANCE_US, TOLERANCE_SHARE * bare.p50);
  const ok = over.p50 <= limit && over.mean <= Math.max(TOLERANCE_US, TOLERANCE_SHARE * bare.mean);
  missed ||= !ok;
  console.log(`| ${c.label} | ${fmt(bare.p50)} / ${fmt(bare.mean)} | ${fmt(pbh.p50)} / ${fmt(pbh.mean)} | ${fmt(over.p50)} / ${fmt(over.mean)} (≤ ${fmt(limit)}) | ${fmt(pick((r) => r.pbh.transport))} | ${fmt(pick((r) => r.node.p50))} / ${fmt(pick((r) => r.node.mean))} | ${fmt(pick((r) => r.harness.p50))} / ${fmt(pick((r) => r.harness.mean))} | ${ok ? 'met' : 'MISSED'} |`);
}
console.log(`\ntarget: the ranked figure (worker door) within 3% or 1 µs of the bare Python loop: ${missed ? 'MISSED' : 'met'}`);
