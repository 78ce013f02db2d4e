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
  { label: 'small: digits_cnn b32', model: 'models/digits_cnn.onnx', data: 'data/digits_x.npy', batch: 32, batches: 16 },
  { label: 'large: resnet50 b1', model: 'models/resnet50.onnx', data: 'data/vision_x.npy', batch: 1, batches: 8 },
];

const hr = process.hrtime.bigint;
const never = { check() {}, run: (p) => p };

async function bench(c) {
  const modelPath = path.join(suite, c.model);
  if (!existsSync(modelPath)) throw new Error(`${modelPath} is missing: run .venv/bin/python python/generate_suite.py`);
  const dataset = await loadDataset({ kind: 'npy', inputs: { input: path.join(suite, c.data) } }, root);
  const batches = Math.min(c.batches, Math.floor(dataset.size / c.batch));
  const pre = buildPreprocessor([], 'input');
  const opts = { intraOpNumThreads: THREADS, interOpNumThreads: 1, graphOptimizationLevel: 'all' };

  // The bare session gets exactly the options PBH's engine resolves to, so only the harness differs.
  const bare = await ort.InferenceSession.create(modelPath, {
    ...opts, executionProviders: ['cpu'], executionMode: 'sequential', enableCpuMemArena: true, enableMemPattern: true, logSeverityLevel: 3,
  });
  const inputName = bare.inputNames[0];
  const prepared = await onnxRuntimeEngine.prepare({
    model: { name: c.label, path: modelPath, workDir: path.join(root, '.cache') },
    batchSize: c.batch, device: 'cpu', options: onnxRuntimeEngine.optionsSchema.parse(opts), inputs: [], seed: 0,
  });
  const xs = Array.from({ length: batches }, (_, b) => dataset.read(b * c.batch, c.batch).inputs.input);

  const bareRound = async () => {
    const t0 = hr();
    for (const x of xs) await bare.run({ [inputName]: new ort.Tensor('float32', x.data, x.dims) });
    return (batches * c.batch * 1e9) / Number(hr() - t0);
  };
  const pbhRound = async () => {
    const r = await runLoop({
      prepared, dataset, preprocessor: pre, inputName, outputName: 'x', batchSize: c.batch, batches, warmupBatches: 0,
      sessions: 1, scorers: [], tracker: new PerformanceTracker(builtinMetrics),
      metricContext: (recorded) => ({ pid: process.pid, sampleRssBytes: async () => process.memoryUsage.rss(), cpuTimeUs: async () => { const u = process.cpuUsage(); return u.user + u.system; }, recorded }),
      deadline: never,
    });
    const s = r.sessions[0];
    const diffs = Array.from(r.raw.predict, (p, i) => p - r.raw.engine[i]).sort((a, b) => a - b);
    return { sps: s.throughput_sps, wallSps: (s.samples * 1e9) / s.wall_ns, overheadUs: (s.latency.predict.mean - s.latency.engine.mean) / 1e3, overheadP50Us: diffs[Math.floor(diffs.length / 2)] / 1e3 };
  };

  for (let i = 0; i < 3; i++) { await bareRound(); await pbhRound(); }
  const bareSps = [], pbhSps = [], pbhWall = [], overhead = [], overheadP50 = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate who goes first so drift (thermal, other tenants) hits both sides alike.
    const order = r % 2 === 0 ? ['bare', 'pbh'] : ['pbh', 'bare'];
    for (const side of order) {
      if (side === 'bare') bareSps.push(await bareRound());
      else { const p = await pbhRound(); pbhSps.push(p.sps); pbhWall.push(p.wallSps); overhead.push(p.overheadUs); overheadP50.push(p.overheadP50Us); }
    }
  }
  await bare.release();
  await prepared.dispose();
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
