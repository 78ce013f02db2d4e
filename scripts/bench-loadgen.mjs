#!/usr/bin/env node
// npm run bench:loadgen — the real MLPerf LoadGen (mlcommons-loadgen, pinned in python/requirements.txt) against PBH's
// own `pbh run` on the same system under test: OpenVINO on the bundled digits CNN at batch 1, fp32 pinned
// (INFERENCE_PRECISION_HINT f32), compiled by the OpenVINO engine's own load with the options its optionsSchema
// parses (scripts/loadgen_sut.py), in single-stream and server scenarios.
//   LoadGen  its summary's 50/90/99th percentile latencies (nearest rank), from issue (single stream) or scheduled
//            arrival (server) to QuerySamplesComplete, the SUT being the engine's bound calls / its bind_async
//            requests over the same resident tensors
//   PBH      the same cells from a temporary config with `scenario:` entries, read back with
//            `pbh query ... --format json`: the Profile's headline boundary (`engine` for single stream, `query`
//            for server: from the scheduled arrival, queueing included), percentiles by linear interpolation
//   worker   the engine's sut.closedLoop (single stream: engine_ns per query, back to back in the worker) and
//            sut.schedule (server: Poisson arrivals at TARGET_QPS, completed - arrival per query) on the same cell,
//            called directly: what the harness measures once it drives sessions through them; nearest rank, as
//            LoadGen reports
// Runs alternate (LoadGen, PBH, LoadGen, PBH, ... per ROUNDS) and the table shows each figure's median over rounds.
// Needs `npm run build`, the venv (npx pbh doctor --fix) and the bundled suite (npm run generate). Run it on a quiet
// machine: it warns when the load average is above 1.
// Knobs: DURATION_MS (5000 per scenario per run), ROUNDS (2), TARGET_QPS (2000), LATENCY_BOUND_MS (2).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { loadDataset, loadPlugin } from '@pbh/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = path.join(root, '.venv', 'bin', 'python');
const pbh = path.join(root, 'packages', 'core', 'bin', 'pbh.js');
const model = path.join(root, '.cache', 'suite', 'models', 'digits_cnn.onnx');
const data = path.join(root, '.cache', 'suite', 'data', 'digits_x.npy');
const labels = path.join(root, '.cache', 'suite', 'data', 'digits_y.npy');
const DURATION_MS = Number(process.env.DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const TARGET_QPS = Number(process.env.TARGET_QPS ?? 2000);
const LATENCY_BOUND_MS = Number(process.env.LATENCY_BOUND_MS ?? 2);
const openvinoEngine = (await loadPlugin('@pbh/engine-openvino')).engines.find((e) => e.name === 'openvino');
// The options exactly as PBH's worker receives them (zod-parsed, defaults filled).
const options = openvinoEngine.optionsSchema.parse({ hint: 'latency' });

for (const file of [python, model, data]) {
  if (!existsSync(file)) throw new Error(`missing ${file}: run npx pbh doctor --fix and npm run generate first`);
}
const load = os.loadavg()[0];
if (load > 1) console.warn(`warning: load average ${load.toFixed(2)}: other work shares these cores, figures will be noisy`);

const scenarios = [
  { label: 'single_stream', pbh: { kind: 'single_stream', min_duration_ms: DURATION_MS }, minQueries: 1024 },
  {
    label: `server ${TARGET_QPS} qps`,
    pbh: { kind: 'server', target_qps: TARGET_QPS, latency_bound_ms: LATENCY_BOUND_MS, min_duration_ms: DURATION_MS },
    minQueries: 1024,
  },
];

const workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-bench-loadgen-'));

const loadgenResultSchema = z.object({
  p50_ns: z.number(),
  p90_ns: z.number(),
  p99_ns: z.number(),
  valid: z.string().nullable(),
  rate: z.number().nullable(),
});

function runLoadgen(scenario, round) {
  const outDir = path.join(workDir, `loadgen-${scenario.pbh.kind}-${round}`);
  mkdirSync(outDir, { recursive: true });
  const request = {
    model,
    data,
    options,
    precision: 'fp32',
    scenario: scenario.pbh.kind,
    min_duration_ms: DURATION_MS,
    min_query_count: scenario.minQueries,
    target_qps: TARGET_QPS,
    latency_bound_ms: LATENCY_BOUND_MS,
    out_dir: outDir,
  };
  execFileSync(python, [path.join(root, 'scripts', 'loadgen_sut.py'), JSON.stringify(request)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const result = loadgenResultSchema.parse(JSON.parse(readFileSync(path.join(outDir, 'result.json'), 'utf8')));
  return { p50: result.p50_ns / 1e6, p90: result.p90_ns / 1e6, p99: result.p99_ns / 1e6, valid: result.valid ?? '?' };
}

const pbhRowSchema = z.object({
  engine_label: z.string(),
  status: z.string(),
  validity: z.string().nullable(),
  headline_boundary: z.string().nullable(),
  p50: z.number().nullable(),
  p90: z.number().nullable(),
  p99: z.number().nullable(),
});

function runPbh(round) {
  const db = path.join(workDir, `pbh-${round}.duckdb`);
  // JSON is YAML: `pbh run` reads either.
  const config = {
    name: 'bench-loadgen',
    description: 'OpenVINO digits CNN b1 in the scenarios LoadGen runs next to it (scripts/bench-loadgen.mjs)',
    seed: 0,
    dataset: { kind: 'npy', name: 'digits-test', inputs: { input: data }, labels },
    models: [{ name: 'digits_cnn', path: model, family: 'cnn', framework: 'numpy', weights: 'trained' }],
    engines: scenarios.map((s) => ({ name: 'openvino', label: s.pbh.kind, options, precision: 'fp32', scenario: s.pbh })),
    batch_sizes: [1],
    warmup_batches: 10,
    sessions: 1,
    timeout_s: 600,
    scorers: [],
    layer_profile: { enabled: false },
  };
  const file = path.join(workDir, `config-${round}.yaml`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  execFileSync(process.execPath, [pbh, 'run', file, '--db', db], { stdio: ['ignore', 'ignore', 'inherit'] });
  // The headline boundary's percentiles: `engine` for single stream, `query` (from the scheduled arrival) for server.
  const pick = (stat) => `CASE headline_boundary WHEN 'query' THEN query_${stat}_ms ELSE engine_${stat}_ms END AS ${stat}`;
  const sql = `SELECT engine_label, status, validity, headline_boundary, ${pick('p50')}, ${pick('p90')}, ${pick('p99')} FROM profiles`;
  const out = execFileSync(process.execPath, [pbh, 'query', sql, '--db', db, '--format', 'json'], { encoding: 'utf8' });
  const rows = z.array(pbhRowSchema).parse(JSON.parse(out));
  return new Map(rows.map((row) => [row.engine_label, row]));
}

// LoadGen's percentile: the sample at rank ceil(p * n), 1-based (nearest rank).
const nearestRank = (values, p) => {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
};
const percentilesMs = (ns) => ({ p50: nearestRank(ns, 0.5) / 1e6, p90: nearestRank(ns, 0.9) / 1e6, p99: nearestRank(ns, 0.99) / 1e6, valid: '-' });

// Every digits sample a resident batch of one, as LoadGen's QSL holds them.
const dataset = await loadDataset({ kind: 'npy', inputs: { input: data }, labels }, '/');
const samples = Array.from({ length: dataset.size }, (_, i) => dataset.read(i, 1).inputs);

async function runWorker(round) {
  const prepared = await openvinoEngine.prepare({
    model: { name: 'digits_cnn', path: model, workDir },
    batchSize: 1,
    device: 'cpu',
    options,
    inputs: [{ name: 'input', dtype: 'float32', shape: [1, 1, 8, 8] }],
    seed: round,
    precision: 'fp32',
    process: 'worker',
  });
  try {
    await prepared.library.load(samples);
    await prepared.sut.closedLoop({ batches: samples.length, minQueries: 100, minDurationNs: 0 });
    const session = await prepared.sut.closedLoop({ batches: samples.length, minQueries: 1024, minDurationNs: DURATION_MS * 1e6 });
    // Poisson arrivals at TARGET_QPS for DURATION_MS, batches drawn uniformly, as LoadGen's server schedule.
    let seed = 12345 + round;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) + 0.5) / 2 ** 31;
    const arrivalsNs = [];
    for (let t = 0; t < DURATION_MS * 1e6 || arrivalsNs.length < 1024; t += (-Math.log(random()) / TARGET_QPS) * 1e9) arrivalsNs.push(t);
    const batches = arrivalsNs.map(() => Math.floor(random() * samples.length));
    const schedule = await prepared.sut.schedule({ batches, arrivalsNs, concurrency: prepared.capabilities.maxConcurrency });
    return {
      single_stream: percentilesMs(session.engineNs),
      server: percentilesMs(schedule.completedNs.map((done, q) => done - arrivalsNs[q])),
    };
  } finally {
    await prepared.dispose();
  }
}

const results = new Map(scenarios.map((s) => [s.pbh.kind, { loadgen: [], pbh: [], worker: [] }]));
for (let round = 0; round < ROUNDS; round++) {
  for (const scenario of scenarios) results.get(scenario.pbh.kind).loadgen.push(runLoadgen(scenario, round));
  const worker = await runWorker(round);
  for (const scenario of scenarios) results.get(scenario.pbh.kind).worker.push(worker[scenario.pbh.kind]);
  const rows = runPbh(round);
  for (const scenario of scenarios) {
    const row = rows.get(scenario.pbh.kind);
    if (!row || row.status !== 'ok' || row.p50 === null) throw new Error(`pbh run gave no ok Profile for ${scenario.pbh.kind}: ${JSON.stringify(row)}`);
    results.get(scenario.pbh.kind).pbh.push({ p50: row.p50, p90: row.p90, p99: row.p99, valid: row.validity ?? '?', boundary: row.headline_boundary });
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[sorted.length >> 1] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};
const us = (ms) => (ms * 1000).toFixed(1);
const header = ['scenario', 'LoadGen p50', 'p90', 'p99', 'PBH p50', 'p90', 'p99', 'PBH boundary', 'PBH/LoadGen p50', 'p90', 'p99', 'worker p50', 'p90', 'p99', 'worker/LoadGen p50', 'p90', 'p99', 'valid (LG/PBH)'];
const table = [header];
for (const scenario of scenarios) {
  const { loadgen, pbh: ours, worker } = results.get(scenario.pbh.kind);
  const medians = (runs) => Object.fromEntries(['p50', 'p90', 'p99'].map((k) => [k, median(runs.map((r) => r[k]))]));
  const [lg, pb, wk] = [medians(loadgen), medians(ours), medians(worker)];
  table.push([
    scenario.label,
    us(lg.p50), us(lg.p90), us(lg.p99),
    us(pb.p50), us(pb.p90), us(pb.p99),
    ours[0].boundary,
    (pb.p50 / lg.p50).toFixed(2), (pb.p90 / lg.p90).toFixed(2), (pb.p99 / lg.p99).toFixed(2),
    us(wk.p50), us(wk.p90), us(wk.p99),
    (wk.p50 / lg.p50).toFixed(2), (wk.p90 / lg.p90).toFixed(2), (wk.p99 / lg.p99).toFixed(2),
    `${loadgen.map((r) => r.valid).join(',')}/${ours.map((r) => r.valid).join(',')}`,
  ]);
}
const widths = header.map((_, i) => Math.max(...table.map((row) => String(row[i]).length)));
console.log(`OpenVINO ${JSON.stringify(options)} fp32, digits_cnn b1, latencies in µs, ${ROUNDS} rounds of ${DURATION_MS} ms per scenario (medians over rounds)`);
for (const row of table) console.log(row.map((cell, i) => String(cell).padEnd(widths[i])).join('  '));
