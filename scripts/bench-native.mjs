#!/usr/bin/env node
// npm run bench:native — per native engine, PBH's model-only throughput (the worker's `bench`, no IPC) against the
// runtime's own tool on the same model, batch size and thread count, interleaved in one run:
//   OpenVINO: benchmark_app (synchronous API, latency hint, one request)
//   TVM:      the module's own time_evaluator in a separate process (scripts/tvm_time_evaluator.py)
// Target: within 5%. Also prints the harness `predict` overhead per batch (predict - engine).
// Needs `npm run build`, the venv (npx pbh doctor --fix) and the bundled suite (npm run generate).
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRegistry, loadDataset } from '@pbh/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const suite = path.join(root, '.cache', 'suite');
const python = path.join(root, '.venv', 'bin', 'python');
const THREADS = Number(process.env.THREADS ?? 2);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const ITERS = Number(process.env.ITERS ?? 200);

const cases = [
  { label: 'digits_cnn b1', model: 'models/digits_cnn.onnx', data: 'data/digits_x.npy', batch: 1, iters: ITERS * 5 },
  { label: 'digits_cnn b32', model: 'models/digits_cnn.onnx', data: 'data/digits_x.npy', batch: 32, iters: ITERS },
  { label: 'squeezenet b1', model: 'models/squeezenet.onnx', data: 'data/vision_x.npy', batch: 1, iters: Math.ceil(ITERS / 4) },
];

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

// benchmark_app refuses -nthreads next to -hint, so both go in through -load_config: exactly the properties PBH sets.
function benchmarkApp(modelPath, batch, iters, shape) {
  const config = path.join(workDir, 'benchmark_app.json');
  writeFileSync(config, JSON.stringify({ CPU: { PERFORMANCE_HINT: 'LATENCY', INFERENCE_NUM_THREADS: String(THREADS) } }));
  const out = execFileSync(path.join(root, '.venv', 'bin', 'benchmark_app'), [
    '-m', modelPath, '-d', 'CPU', '-api', 'sync', '-nireq', '1', '-niter', String(iters),
    '-load_config', config, '-shape', `input[${shape.join(',')}]`,
  ], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const m = /Median:\s+([\d.]+)\s*(us|ms)/.exec(out);
  if (!m) throw new Error(`cannot read benchmark_app's median latency from:\n${out.slice(-2000)}`);
  const medianS = Number(m[1]) / (m[2] === 'us' ? 1e6 : 1e3);
  return batch / medianS;
}

function tvmTimeEvaluator(modelPath, batch, iters, shape) {
  const out = execFileSync(python, [path.join(root, 'scripts', 'tvm_time_evaluator.py'), modelPath, shape.join(','), String(iters), String(THREADS)], {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TVM_NUM_THREADS: String(THREADS) },
  });
  const medianNs = Number(/median_ns=(\d+(?:\.\d+)?)/.exec(out)?.[1]);
  if (!Number.isFinite(medianNs)) throw new Error(`cannot read time_evaluator's median from:\n${out}`);
  return (batch * 1e9) / medianNs;
}

const tools = {
  openvino: { options: { hint: 'latency', threads: THREADS }, tool: 'benchmark_app', run: benchmarkApp },
  tvm: { options: { threads: THREADS }, tool: 'time_evaluator', run: tvmTimeEvaluator },
};

const registry = await createRegistry();
const workDir = await mkdtemp(path.join(os.tmpdir(), 'pbh-bench-native-'));
console.log(`bench:native  threads=${THREADS} rounds=${ROUNDS} (medians; model-only = worker bench, no IPC)`);
console.log('engine    case             tool sps   PBH model-only sps  ratio  predict-engine µs (p50)');
let missed = false;
for (const [name, spec] of Object.entries(tools)) {
  const engine = registry.engines.get(name);
  const availability = engine ? await engine.probe() : { available: false, reason: 'not installed' };
  if (!availability.available) {
    console.log(`${name.padEnd(9)} skipped: ${availability.reason}`);
    continue;
  }
  for (const c of cases) {
    const modelPath = path.join(suite, c.model);
    if (!existsSync(modelPath)) throw new Error(`${modelPath} is missing: run npm run generate`);
    const ds = await loadDataset({ kind: 'npy', inputs: { input: path.join(suite, c.data) } }, root);
    const x = ds.read(0, c.batch).inputs.input;
    const prepared = await engine.prepare({
      model: { name: c.label, path: modelPath, workDir }, batchSize: c.batch, device: 'cpu',
      options: engine.optionsSchema.parse(spec.options), inputs: [{ name: 'input', dtype: 'float32', shape: x.dims }], seed: 0, precision: 'fp32',
    });
    const toolSps = [], pbhSps = [], overhead = [];
    try {
      await prepared.bench({ input: x }, Math.ceil(c.iters / 10));
      for (let r = 0; r < ROUNDS; r++) {
        const runTool = () => toolSps.push(spec.run(modelPath, c.batch, c.iters, x.dims));
        const runPbh = async () => {
          const b = await prepared.bench({ input: x }, c.iters);
          pbhSps.push((c.batch * 1e9) / median(b.iterationNs));
        };
        if (r % 2 === 0) { runTool(); await runPbh(); } else { await runPbh(); runTool(); }
      }
      const diffs = [];
      for (let i = 0; i < Math.min(200, c.iters); i++) {
        const t0 = process.hrtime.bigint();
        const res = await prepared.predict({ input: x });
        diffs.push(Number(process.hrtime.bigint() - t0 - res.engineNs) / 1e3);
      }
      overhead.push(median(diffs));
    } finally {
      await prepared.dispose();
    }
    const ratio = median(pbhSps) / median(toolSps);
    missed ||= Math.abs(1 - ratio) > 0.05;
    console.log(`${name.padEnd(9)} ${c.label.padEnd(15)} ${median(toolSps).toFixed(1).padStart(9)} ${median(pbhSps).toFixed(1).padStart(20)} ${ratio.toFixed(3).padStart(6)} ${median(overhead).toFixed(1).padStart(24)}`);
  }
}
console.log(`\ntarget: model-only within 5% of the runtime's own tool: ${missed ? 'MISSED' : 'met'}`);
