import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openStore, type Profile } from '@pbh/core';
import { pbh, ROOT } from './cli.js';

const SUITE = path.join(ROOT, '.cache', 'suite');

const digits = { kind: 'npy', name: 'digits-npy', inputs: { x: path.join(SUITE, 'data', 'digits_x.npy') }, labels: path.join(SUITE, 'data', 'digits_y.npy'), limit: 64 };
const digitsCnn = { name: 'digits_cnn', path: path.join(SUITE, 'models', 'digits_cnn.onnx'), family: 'cnn', framework: 'numpy', weights: 'trained' };
const small = { warmup_batches: 1, sessions: 2, seed: 0 };

/**
 * Real runs, each making one kind of Profile the pages must explain:
 * - `pages-invalid`: OpenVINO against onnxruntime with a zero tolerance, so its fp32 outputs differ (invalid_output
 *   at the same precision), and an ok onnxruntime Profile;
 * - `pages-vision`: a random-weight SqueezeNet scored by agreement, from a config in its own folder that names the
 *   files by paths relative to itself (the pages must show them so, never the absolute path);
 * - `pages-ok`: the same cell with the default tolerance, OpenVINO ok beside onnxruntime (ranks, accuracy cost);
 * - `pages-timeout`: TVM with a 0.5 s limit, which its compile alone exceeds (timeout).
 */
export async function runFixtures(tmp: string, db: string): Promise<void> {
  const configs = path.join(tmp, 'configs', 'nested');
  mkdirSync(configs, { recursive: true });
  const relative = (file: string): string => path.relative(configs, file);
  const runs: [string, Record<string, unknown>][] = [
    ['invalid.json', {
      name: 'pages-invalid', ...small, dataset: digits, models: [digitsCnn],
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 2 } }, { name: 'openvino' }],
      batch_sizes: [1], scorers: ['top1'], tolerance: { atol: 0, rtol: 0 },
    }],
    [path.join('configs', 'nested', 'vision.json'), {
      name: 'pages-vision', ...small,
      dataset: { kind: 'npy', name: 'vision-synthetic', inputs: { input: relative(path.join(SUITE, 'data', 'vision_x.npy')) }, limit: 4 },
      models: [{ name: 'squeezenet', path: relative(path.join(SUITE, 'models', 'squeezenet.onnx')), family: 'cnn', framework: 'onnx-light-model', weights: 'random' }],
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 2 } }, { name: 'openvino' }],
      batch_sizes: [1], scorers: ['agreement'], tolerance: { atol: 1e-4, rtol: 1e-3 },
    }],
    ['ok.json', {
      name: 'pages-ok', ...small, dataset: digits, models: [digitsCnn],
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 2 } }, { name: 'openvino', options: { hint: 'latency' } }],
      batch_sizes: [1], scorers: ['top1'],
    }],
    ['timeout.json', { name: 'pages-timeout', ...small, dataset: digits, models: [digitsCnn], engines: [{ name: 'tvm' }], batch_sizes: [8], scorers: ['top1'], timeout_s: 0.5 }],
  ];
  for (const [file, config] of runs) {
    const configFile = path.join(tmp, file);
    await writeFile(configFile, JSON.stringify(config, null, 2));
    const run = await pbh(['run', configFile, '--db', db]);
    if (run.code !== 0 && run.code !== 1) throw new Error(`pbh run ${file} failed (${run.code}): ${run.stderr}\n${run.stdout}`);
  }
}

/**
 * Two Profiles this CPU cannot produce, made from the real invalid OpenVINO Profile and stored under the same run:
 * what a CPU with bf16 arithmetic records (OpenVINO asked for and executing bf16 against onnxruntime's fp32), and a
 * worker that died with a stack and stderr naming local paths. Named `bf16-*` and `crash-*` so tests can find them.
 */
export async function addConstructedProfiles(db: string): Promise<void> {
  const store = await openStore(db);
  try {
    const ids = await store.listProfiles({});
    const invalid = ids.find((p) => p.status === 'invalid_output');
    if (!invalid) throw new Error('the fixture has no invalid_output Profile to derive from');
    const base = (await store.getProfile(invalid.profile_id)) as Profile;
    const precision = { model: 'fp32' as const, requested: 'bf16' as const, executed: 'bf16' as const, evidence: 'INFERENCE_PRECISION_HINT=bf16 set, compiled model reports bf16' };
    await store.writeProfile({
      ...base,
      profile_id: 'bf16-openvino',
      cell_key: `${base.cell_key}-bf16`,
      engine: { ...base.engine, label: 'openvino-bf16', precision, facts: { ...base.engine.facts, inference_precision: 'bf16' } },
      correctness: base.correctness && { ...base.correctness, max_abs_error: 2.4e-2, max_rel_error: 1.1e-2, atol: 1e-2, rtol: 1e-2, precision: 'bf16', passed: false },
      error: 'outputs differ from onnxruntime on the first batch: max abs error 2.400e-2, max rel error 1.100e-2 (atol 1.00e-2, rtol 1.00e-2; bf16 rule). Not timed: a wrong answer is not a speed result.',
    });
    await store.writeProfile({
      ...base,
      profile_id: 'crash-openvino',
      cell_key: `${base.cell_key}-crash`,
      status: 'failed',
      correctness: null,
      error: `openvino worker was killed by SIGSEGV while "predict" was pending\n--- last stderr of openvino ---\nFatal error in ${ROOT}/packages/engine-openvino/python/openvino_worker.py`,
      error_detail: `Error: openvino worker was killed\n    at WorkerClient.crashedError (${ROOT}/packages/core/dist/worker/client.js:290:12)`,
    });
  } finally {
    await store.close();
  }
}
