#!/usr/bin/env node
// npm run bench:overhead — PBH's ONNX Runtime throughput against a bare onnxruntime-node loop, side by side and
// interleaved in one process, same model, batch size and threads. Targets: within 2% throughput and
// predict - engine under 20 µs per batch. Needs `npm run build` and the bundled suite (npm run demo generates it).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { PerformanceTracker, loadDataset, buildPreprocessor, runLoop, builtinMetrics } from '@pbh/core';
import { onnxRuntimeEngine } from '@pbh/engine-onnx';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const suite = path.join(root, '.cache', 'suite');
const THREADS = Number(process.env.THREADS ?? 2);
const ROUNDS = Number(process.env.ROUNDS ?? 6);

const cases = [
  // Each round is one pass (a PBH session) over `batches`, repeated `passes` times, so that a round of the small
  // model lasts tens of milliseconds rather than a few, which the scheduler's noise on a shared VM would swamp.
  { label: 'small: digits_cnn b32', model: 'models/digits_cnn.onnx', data: 'data/digits_x.npy', batch: 32, batches: 56, passes: 4 },
  { label: 'large: resnet50 b1', model: 'models/resnet50.onnx', data: 'data/vision_x.npy', batch: 1, batches: 8, passes: 1 },
];

const hr = process.hrtime.bigint;
const never = { check() {}, run: (p) => p, race: (p) => p };

async function bench(c) {
  const modelPath = path.join(suite, c.model);
  if (!existsSync(modelPath)) throw new Error(`${modelPath} is missing: run .venv/bin/python python/generate_suite.py`);
  const dataset = await loadDataset({ kind: 'npy', inputs: { input: path.join(suite, c.data) } }, root);
  const batches = Math.min(c.batches, Math.floor(dataset.size / c.batch));
  const pre = buildPreprocessor([], 'input');
  const opts = { intraOpNumThreads: THREADS, interOpNumThreads: 1, graphOptimizationLevel: 'all' };

  // Only one session is alive at a time: two ORT sessions in one process each keep an intra-op pool whose threads
  // spin after work, and on 2 cores the idle one's spinning steals from the one being measured. Each round creates,
  // warms and releases its session. The bare session gets exactly the options PBH's engine resolves to.
  const bareOptions = {
    ...opts, executionProviders: ['cpu'], executionMode: 'sequential', enableCpuMemArena: true, enableMemPattern: true, logSeverityLevel: 3,
  };
  const xs = Array.from({ length: batches }, (_, b) => dataset.read(b * c.batch, c.batch).inputs.input);
  const WARMUP = 3;

  const bareRound = async () => {
    const bare = await ort.InferenceSession.create(modelPath, bareOptions);
    const inputName = bare.inputNames[0];
    const runAll = async (list) => { for (const x of list) await bare.run({ [inputName]: new ort.Tensor('float32', x.data, x.dims) }); };
    await runAll(xs.slice(0, WARMUP));
    const t0 = hr();
    for (let p = 0; p < c.passes; p++) await runAll(xs);
    const sps = (c.passes * batches * c.batch * 1e9) / Number(hr() - t0);
    await bare.release();
    return sps;
  };
  const pbhRound = async () => {
    const prepared = await onnxRuntimeEngine.prepare({
      model: { name: c.label, path: modelPath, workDir: path.join(root, '.cache') },
      batchSize: c.batch, device: 'cpu', options: onnxRuntimeEngine.optionsSchema.parse(opts), inputs: [], seed: 0, precision: 'fp32',
    });
    const r = await runLoop({
      prepared, dataset, preprocessor: pre, inputName: 'input', outputName: 'x', batchSize: c.batch, batches, warmupBatches: WARMUP,
      sessions: c.passes, scorers: [], tracker: new PerformanceTracker(builtinMetrics),
      metricContext: { pid: process.pid, sampleRssBytes: async () => process.memoryUsage.rss(), cpuTimeUs: async () => { const u = process.cpuUsage(); return u.user + u.system; } },
      deadline: never,
    });
    await prepared.dispose();
    const predictNs = r.raw.predict.reduce((a, v) => a + v, 0);
    const engineNs = r.raw.engine.reduce((a, v) => a + v, 0);
    const wallNs = r.sessions.reduce((a, s) => a + s.wall_ns, 0);
    const samples = r.sessions.reduce((a, s) => a + s.samples, 0);
    const diffs = Array.from(r.raw.predict, (p, i) => p - r.raw.engine[i]).sort((a, b) => a - b);
    return { sps: (samples * 1e9) / predictNs, wallSps: (samples * 1e9) / wallNs, overheadUs: (predictNs - engineNs) / r.raw.predict.length / 1e3, overheadP50Us: diffs[Math.floor(diffs.length / 2)] / 1e3 };
  };

  await bareRound();
  await pbhRound();
  const bareSps = [], pbhSps = [], pbhWall = [], overhead = [], overheadP50 = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate who goes first so drift (thermal, other tenants) hits both sides alike.
    const order = r % 2 === 0 ? ['bare', 'pbh'] : ['pbh', 'bare'];
    for (const side of order) {
      if (side === 'bare') bareSps.push(await bareRound());
      else { const p = await pbhRound(); pbhSps.push(p.sps); pbhWall.push(p.wallSps); overhead.push(p.overheadUs); overheadP50.push(p.overheadP50Us); }
    }
  }
  const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
  return { label: c.label, bare: median(bareSps), pbh: median(pbhSps), pbhWall: median(pbhWall), overheadUs: median(overhead), overheadP50Us: median(overheadP50) };
}

console.log(`bench:overhead  threads=${THREADS} rounds=${ROUNDS} (medians of interleaved rounds)`);
console.log('case                    bare sps    PBH sps  ratio  PBH wall sps  wall ratio  predict-engine µs (mean / p50)');
let fail = false;
for (const c of cases) {
  const r = await bench(c);
  const ratio = r.pbh / r.bare;
  const wallRatio = r.pbhWall / r.bare;
  fail ||= wallRatio < 0.98 || r.overheadP50Us >= 20;
  console.log(`${r.label.padEnd(22)} ${r.bare.toFixed(1).padStart(9)} ${r.pbh.toFixed(1).padStart(10)} ${ratio.toFixed(3).padStart(6)} ${r.pbhWall.toFixed(1).padStart(13)} ${wallRatio.toFixed(3).padStart(11)} ${r.overheadUs.toFixed(2).padStart(18)} / ${r.overheadP50Us.toFixed(2)}`);
}
console.log(`\nPBH sps = samples / summed predict time (what Profiles report); wall = samples / session wall time incl. preprocessing and loop.`);
console.log(`target: wall ratio >= 0.98 and median predict-engine < 20 µs: ${fail ? 'MISSED' : 'met'}`);
