#!/usr/bin/env node
// npm run bench:quantize — ResNet-50 static INT8 on OpenVINO at batch 1, against benchmark_app on the same files.
//   1. pbh quantize MODEL --method static (ONNX Runtime's QDQ quantizer, calibrated on the suite's inputs) into
//      .cache/quantized, skipped when a stamp over the model, python/quantize and the flags matches.
//   2. ROUNDS interleaved rounds (the order alternates each round): pbh run of the dense fp32 and the INT8 file on
//      OpenVINO (latency hint, THREADS threads, single stream), the ranked throughput read back from the database; and
//      benchmark_app on the same two files with exactly the properties PBH sets (sync API, one request, the latency
//      hint, INFERENCE_NUM_THREADS, INFERENCE_PRECISION_HINT f32: the int8 request's hint), its throughput in FPS.
//      benchmark_app's own default (bf16 outside the quantized regions on AMX/AVX512-BF16 CPUs) is printed beside it.
//   3. The targets: PBH's INT8 figure within 3% of benchmark_app's, and at least 3x PBH's own dense fp32 figure.
// Each figure is the median over rounds; the load average before and after is printed (the targets are for a quiet
// machine). Knobs: MODEL (resnet50; any suite model with an image input), ROUNDS (3), SECONDS (10: each measurement's
// minimum duration), THREADS (2). Needs `npm run build`, the venv (npx pbh doctor --fix) and the suite (npm run generate).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MODEL = process.env.MODEL ?? 'resnet50';
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECONDS = Number(process.env.SECONDS ?? 10);
const THREADS = Number(process.env.THREADS ?? 2);
const WITHIN = 0.03;
const MIN_SPEEDUP = 3;

const suite = path.join(root, '.cache', 'suite');
const dense = path.join(suite, 'models', `${MODEL}.onnx`);
if (!existsSync(dense)) throw new Error(`${dense} is missing: run npm run generate (python/generate_suite.py) first`);
const digits = MODEL.startsWith('digits_');
const calibration = path.join(suite, 'data', digits ? 'digits_calibration_x.npy' : 'vision_x.npy');
const inputs = path.join(suite, 'data', digits ? 'digits_x.npy' : 'vision_x.npy');
const outDir = path.join(root, '.cache', 'quantized');
const int8 = path.join(outDir, `${MODEL}.static.int8.onnx`);
const pbhMain = path.join(root, 'packages', 'core', 'dist', 'cli', 'main.js');
const work = await mkdtemp(path.join(os.tmpdir(), 'pbh-bench-quantize-'));
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const loadBefore = load();

// 1. The INT8 file, made once per model, quantizer code and flags.
const flags = ['--method', 'static', '--calibration', calibration];
const stamp = createHash('sha256').update(readFileSync(dense)).update(flags.join(' '));
for (const f of readdirSync(path.join(root, 'python', 'quantize')).filter((f) => f.endsWith('.py')).sort()) stamp.update(f).update(readFileSync(path.join(root, 'python', 'quantize', f)));
const stampFile = path.join(outDir, `${MODEL}.static.stamp`);
const digest = stamp.digest('hex');
if (!existsSync(int8) || !existsSync(stampFile) || readFileSync(stampFile, 'utf8').trim() !== digest) {
  mkdirSync(outDir, { recursive: true });
  process.stdout.write(`quantizing ${path.relative(root, dense)} (static QDQ, calibrated on ${path.relative(root, calibration)})...\n`);
  execFileSync('node', [pbhMain, 'quantize', dense, '--out', outDir, ...flags], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  writeFileSync(stampFile, `${digest}\n`);
}

// 2a. PBH: one pbh run of both files per round, each a single-stream session of at least SECONDS.
const config = path.join(work, 'bench-quantize.json');
writeFileSync(config, JSON.stringify({
  name: 'bench-quantize', seed: 0,
  dataset: { kind: 'npy', name: `${MODEL}-inputs`, inputs: { input: inputs }, limit: 16 },
  models: [
    { name: MODEL, path: dense, weights: 'random' },
    { name: `${MODEL}_static_int8`, path: int8, weights: 'random' },
  ],
  engines: [{ name: 'openvino', options: { hint: 'latency', threads: THREADS } }],
  batch_sizes: [1], warmup_batches: 5, sessions: 1,
  scenario: { kind: 'single_stream', min_duration_ms: SECONDS * 1000 },
  scorers: [],
  // The fp32 reference gate is not this bench's question (the correctness tests hold it); OpenVINO is its own reference.
  reference_engine: 'openvino',
}, null, 2));

function pbhRound(round) {
  const db = path.join(work, `round-${round}.duckdb`);
  execFileSync('node', [pbhMain, 'run', config, '--db', db], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const json = execFileSync('node', [pbhMain, 'query', 'SELECT model_name, precision_executed, throughput_mean FROM profiles WHERE status = \'ok\'', '--db', db, '--format', 'json'], { cwd: root, encoding: 'utf8' });
  const rows = JSON.parse(json);
  const ranked = JSON.parse(execFileSync('node', [pbhMain, 'query', 'SELECT model, p50_ms, model_only_p50_ms FROM leaderboard', '--db', db, '--format', 'json'], { cwd: root, encoding: 'utf8' }));
  const of = (name) => ({
    ...(rows.find((r) => r.model_name === name) ?? (() => { throw new Error(`pbh run stored no ok Profile of ${name} (round ${round})`); })()),
    ...ranked.find((r) => r.model === name),
  });
  return { dense: of(MODEL), int8: of(`${MODEL}_static_int8`) };
}

// 2b. benchmark_app on the same file: the properties go in through -load_config (it refuses -nthreads beside -hint);
// its -t takes whole seconds.
function benchmarkApp(file, precision) {
  const props = { PERFORMANCE_HINT: 'LATENCY', INFERENCE_NUM_THREADS: String(THREADS), ...(precision ? { INFERENCE_PRECISION_HINT: precision } : {}) };
  const cfg = path.join(work, `benchmark_app-${precision ?? 'default'}.json`);
  writeFileSync(cfg, JSON.stringify({ CPU: props }));
  const shape = digits ? '1,1,8,8' : '1,3,224,224';
  const out = execFileSync(path.join(root, '.venv', 'bin', 'benchmark_app'), [
    '-m', file, '-d', 'CPU', '-api', 'sync', '-nireq', '1', '-t', String(Math.max(1, Math.round(SECONDS))), '-load_config', cfg, '-shape', `[${shape}]`,
  ], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const fps = /Throughput:\s+([\d.]+)\s*FPS/.exec(out);
  const median = /Median:\s+([\d.]+)\s*(us|ms)/.exec(out);
  if (!fps || !median) throw new Error(`cannot read benchmark_app's throughput and median latency from:\n${out.slice(-2000)}`);
  medians.push({ file, precision, ms: Number(median[1]) / (median[2] === 'us' ? 1e3 : 1) });
  return Number(fps[1]);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
const figures = { pbhDense: [], pbhInt8: [], appDense: [], appInt8: [], appInt8Default: [] };
// Latency medians beside the throughputs: under load a tool's gaps between requests lower its FPS, not its median.
const medians = [];
const p50s = { dense: [], int8: [], denseModelOnly: [], int8ModelOnly: [] };
let executed = '';
for (let round = 0; round < ROUNDS; round++) {
  const pbhFirst = round % 2 === 0;
  const runApp = () => {
    figures.appDense.push(benchmarkApp(dense, 'f32'));
    figures.appInt8.push(benchmarkApp(int8, 'f32'));
    figures.appInt8Default.push(benchmarkApp(int8, null));
  };
  const runPbh = () => {
    const r = pbhRound(round);
    figures.pbhDense.push(r.dense.throughput_mean);
    figures.pbhInt8.push(r.int8.throughput_mean);
    p50s.dense.push(r.dense.p50_ms);
    p50s.int8.push(r.int8.p50_ms);
    p50s.denseModelOnly.push(r.dense.model_only_p50_ms);
    p50s.int8ModelOnly.push(r.int8.model_only_p50_ms);
    executed = `${r.dense.precision_executed} / ${r.int8.precision_executed}`;
  };
  if (pbhFirst) { runPbh(); runApp(); } else { runApp(); runPbh(); }
  process.stdout.write(`round ${round + 1}/${ROUNDS}: PBH fp32 ${figures.pbhDense.at(-1).toFixed(1)}, INT8 ${figures.pbhInt8.at(-1).toFixed(1)} samples/s; benchmark_app fp32 ${figures.appDense.at(-1).toFixed(1)}, INT8 ${figures.appInt8.at(-1).toFixed(1)} (its default hint ${figures.appInt8Default.at(-1).toFixed(1)}) FPS\n`);
}

const m = Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, median(v)]));
const gap = m.pbhInt8 / m.appInt8 - 1;
const speedup = m.pbhInt8 / m.pbhDense;
const row = (label, pbhV, appV) => `${label.padEnd(40)} ${pbhV.toFixed(1).padStart(10)} ${appV.toFixed(1).padStart(14)} ${(100 * (pbhV / appV - 1)).toFixed(1).padStart(8)}%`;
process.stdout.write(`
${MODEL} on OpenVINO, batch 1, ${THREADS} threads, latency hint, ${ROUNDS} round(s) of >= ${SECONDS} s each (median); executed ${executed}
${'file'.padEnd(40)} ${'PBH sps'.padStart(10)} ${'benchmark_app'.padStart(14)} ${'PBH vs'.padStart(9)}
${row(`${MODEL} (fp32)`, m.pbhDense, m.appDense)}
${row(`${MODEL}_static_int8 (INT8, f32 hint)`, m.pbhInt8, m.appInt8)}
benchmark_app INT8 with its default hint (bf16 outside quantized regions where the CPU has it): ${m.appInt8Default.toFixed(1)} FPS
per-batch p50 (ms): PBH fp32 ${median(p50s.dense).toPrecision(3)} (model-only ${median(p50s.denseModelOnly).toPrecision(3)}), INT8 ${median(p50s.int8).toPrecision(3)} (model-only ${median(p50s.int8ModelOnly).toPrecision(3)}); benchmark_app median fp32 ${median(medians.filter((x) => x.file === dense).map((x) => x.ms)).toPrecision(3)}, INT8 ${median(medians.filter((x) => x.file === int8 && x.precision).map((x) => x.ms)).toPrecision(3)}
INT8 vs fp32: PBH ${speedup.toFixed(2)}x, benchmark_app ${(m.appInt8 / m.appDense).toFixed(2)}x
target: the ranked INT8 figure within ${WITHIN * 100}% of benchmark_app's: ${Math.abs(gap) <= WITHIN ? 'met' : 'NOT met'} (${(100 * gap).toFixed(1)}%); INT8 >= ${MIN_SPEEDUP}x PBH's fp32: ${speedup >= MIN_SPEEDUP ? 'met' : 'NOT met'} (${speedup.toFixed(2)}x)
load average before ${loadBefore}, after ${load()} (${os.cpus().length} CPUs): the targets are for a quiet machine
`);
