// Fault suite, a real model's outputs (issue 41, defect 11): silero-vad's OpenVINO-flavoured ONNX, its recurrent state
// fed as PBH's own error message advises ({field, batch_axis: 1}). OpenVINO once reported "output" missing (compiling
// renamed it); now both engines store an ok Profile, and nothing is written outside the database.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeConfig } from '../helpers.js';
import { ROOT } from '../suite.js';
import { exitOf, inSandbox, printTable, record, sandbox } from './sandbox.js';

afterAll(() => printTable('PBH fault suite: real models'));

/** The real models PyPI wheels ship, which scripts/ensure.mjs test installs (npm test and npm run faults run it). */
const WILD = path.join(ROOT, '.cache', 'wild-models');

describe("silero-vad's OpenVINO export (silero_vad_openvino_16k.onnx)", () => {
  it('runs on onnxruntime and openvino, each Profile ok (not invalid_output), exit 0', async () => {
    if (!existsSync(path.join(WILD, '.installed'))) throw new Error(`the real models are not installed (${WILD}): run node scripts/ensure.mjs test`);
    const s = await sandbox('silero vad openvino', async (p) => {
      // A 576-sample window (512 new, 64 of context) and a state of [2, 128] a sample: the model's [1, 576] and [2, 1, 128].
      const spec = { chunk: { dtype: 'float32', shape: [576], low: -1, high: 1, samples: 2 }, state: { dtype: 'float32', shape: [2, 128], low: -0.5, high: 0.5, samples: 2 } };
      execFileSync(path.join(ROOT, '.venv', 'bin', 'python'), [path.join(ROOT, 'test', 'fixtures', 'wild_data.py'), p.work, JSON.stringify(spec)]);
      return writeConfig(p.work, 'c.yaml', {
        name: 'vad',
        dataset: { kind: 'npy', inputs: { chunk: 'chunk.npy', state: 'state.npy' } },
        models: [{ name: 'silero_vad_openvino', path: path.join(WILD, 'silero_vad', 'data', 'silero_vad_openvino_16k.onnx'), inputs: { input: 'chunk', state: { field: 'state', batch_axis: 1 } } }],
        engines: [{ name: 'onnxruntime' }, { name: 'openvino' }],
        batch_sizes: [1],
        warmup_batches: 1,
        sessions: 1,
        scenario: { kind: 'single_stream', min_query_count: 2, min_duration_ms: 0 },
        layer_profile: { enabled: false },
      });
    });
    const r = await inSandbox(s, ['run', path.join(s.work, 'c.yaml'), '--db', s.db]);
    const q = await inSandbox(s, ['query', 'SELECT engine_name, status, error FROM profiles ORDER BY engine_name', '--db', s.db, '--format', 'json']);
    const found = JSON.parse(q.stdout) as { engine_name: string; status: string; error: string | null }[];
    const row = record(s, 'silero-vad OpenVINO export, state {field, batch_axis: 1}', exitOf(r), 2, found.length);
    expect(found).toEqual([
      { engine_name: 'onnxruntime', status: 'ok', error: null },
      { engine_name: 'openvino', status: 'ok', error: null },
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(row.changed).toEqual([]);
    expect(row.tempLeft).toBe(0);
  });
});
