import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findVenvPython } from '@pbh/core';
import { PBH_BIN, ROOT } from '../../../test/suite.js';

let dir: string;
let pt2: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'pbh-torch-model-'));
  const python = findVenvPython()!.python;
  [, pt2] = (await execa(python, [path.join(import.meta.dirname, 'make_torch_models.py'), dir])).stdout.trim().split('\n') as [string, string];
  // 32 seeded rows of 16 features: the .npy the config feeds.
  await execa(python, ['-c', `import numpy as np; np.save(${JSON.stringify(path.join(dir, 'x.npy'))}, np.random.default_rng(0).standard_normal((32, 16)).astype(np.float32))`]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a PyTorch-born model on one leaderboard with the ONNX engines', () => {
  it('exports a .pt2 to ONNX once, runs it natively on pytorch and as ONNX on onnxruntime, and records the exporter', { timeout: 900_000 }, async () => {
    const config = path.join(dir, 'torch-model.yaml');
    const db = path.join(dir, 'pbh.duckdb');
    await writeFile(
      config,
      [
        'name: torch-model',
        'dataset: { kind: npy, inputs: { features: x.npy } }',
        `models: [{ name: mlp, path: ${pt2} }]`,
        'engines:',
        '  - { name: onnxruntime, options: { intraOpNumThreads: 1 } }',
        '  - { name: pytorch, options: { threads: 1 } }',
        'batch_sizes: [4]',
        'warmup_batches: 1',
        'sessions: 2',
        'scenario: { kind: single_stream, min_duration_ms: 50, min_query_count: 20 }',
        'reference_engine: onnxruntime',
        'timeout_s: 300',
      ].join('\n'),
    );
    const env = { ...process.env, PBH_CONVERT_CACHE: path.join(dir, 'cache') };
    const run = await execa('node', [PBH_BIN, 'run', config, '--db', db], { cwd: dir, env, reject: false, all: true });
    expect(run.exitCode, run.all).toBe(0);
    const q = await execa('node', [PBH_BIN, 'query', "SELECT engine_name, status, profile_json FROM profiles ORDER BY engine_name", '--db', db, '--format', 'json'], { cwd: ROOT });
    const rows = JSON.parse(q.stdout) as { engine_name: string; status: string; profile_json: string }[];
    expect(rows.map((r) => [r.engine_name, r.status])).toEqual([
      ['onnxruntime', 'ok'],
      ['pytorch', 'ok'],
    ]);
    const [ort, torch] = rows.map((r) => JSON.parse(r.profile_json) as { model: { framework: string; path: string; source: Record<string, unknown> }; engine: { facts: Record<string, unknown> } });
    expect(ort!.model.framework).toBe('pytorch');
    expect(ort!.model.source).toMatchObject({ path: pt2, format: 'torch_export', exporter: 'torch.onnx.export(dynamo=True) with onnxscript', exporter_version: expect.stringMatching(/^torch 2\.15\.0.*onnxscript 0\.7\.2$/) });
    expect(ort!.model.path).toBe(ort!.model.source.onnx_path);
    // One export for the whole sweep, on disk: the second cell read the same file.
    expect(torch!.model.source.onnx_path).toBe(ort!.model.source.onnx_path);
    // The PyTorch engine ran the .pt2 itself, found through the export's metadata; the gate compared it with onnxruntime.
    expect(torch!.engine.facts).toMatchObject({ source_format: 'torch_export', source_from_onnx_metadata: true });
  });
});
