import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyzeModel, checkNM, nmPatternHolds, readOnnxModel } from '../packages/core/src/model/index.js';
import { parseNpy } from '../packages/core/src/dataset/index.js';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

const PYTHON = path.join(ROOT, '.venv', 'bin', 'python');
const NM = ['1:2', '2:4', '4:8'];

let dir: string;

beforeAll(async () => {
  dir = await tempDir('pbh-prune-');
  execFileSync(PYTHON, [path.join(ROOT, 'test', 'fixtures', 'make_prune_layer.py'), dir]);
});

/** A float32 initializer as [rows, cols] (stored order; the fixture's Gemm has transB=1, so rows are outputs). */
async function weight(file: string, name: string): Promise<{ dims: number[]; data: Float32Array }> {
  const { model } = await readOnnxModel(file);
  const t = model.graph.initializers.find((i) => i.name === name);
  if (!t?.rawData) throw new Error(`${file} has no raw float32 initializer ${name}`);
  // A copy: the reader's view may sit at an offset that is not a multiple of 4 inside the file's buffer.
  return { dims: t.dims, data: new Float32Array(new Uint8Array(t.rawData).buffer) };
}

/** ||W X - W' X||^2 over the calibration samples, computed here from the files, not taken from pbh prune's report. */
function outputError(w: Float32Array, pruned: Float32Array, rows: number, cols: number, x: Float32Array): number {
  let total = 0;
  for (let s = 0; s < x.length / cols; s++) {
    for (let r = 0; r < rows; r++) {
      let d = 0;
      for (let c = 0; c < cols; c++) d += (w[r * cols + c]! - pruned[r * cols + c]!) * x[s * cols + c]!;
      total += d * d;
    }
  }
  return total;
}

describe('pbh prune', () => {
  it('OBC reconstructs a layer better than magnitude pruning at every sparsity and pattern', async () => {
    const out = path.join(dir, 'layer');
    const r = await pbh(['prune', path.join(dir, 'layer.onnx'), '--out', out, '--method', 'obc,magnitude',
      '--unstructured', '0.25,0.75', '--nm', NM.join(','), '--calibration', path.join(dir, 'calibration.npy')]);
    expect(r.stderr).not.toMatch(/Error/);
    expect(r.code).toBe(0);
    const dense = await weight(path.join(dir, 'layer.onnx'), 'fc.weight');
    const [rows, cols] = dense.dims as [number, number];
    const x = parseNpy(await readFile(path.join(dir, 'calibration.npy')), 'calibration.npy').data as Float32Array;
    for (const tag of ['sparse25', 'sparse75', '1of2', '2of4', '4of8']) {
      const errors: Record<string, number> = {};
      for (const method of ['obc', 'magnitude']) {
        const file = path.join(out, `layer.${method}.${tag}.onnx`);
        const pruned = await weight(file, 'fc.weight');
        const zeros = pruned.data.filter((v) => v === 0).length;
        if (tag.startsWith('sparse')) expect(zeros).toBe(Math.round((Number(tag.slice(6)) / 100) * rows * cols));
        else {
          const [n, m] = tag.split('of').map(Number) as [number, number];
          expect(checkNM([{ name: 'fc.weight', dims: pruned.dims, data: pruned.data }], n, m).holds).toBe(true);
          expect(zeros).toBe(rows * (cols - (cols / m) * n));
        }
        errors[method] = outputError(dense.data, pruned.data, rows, cols, x);
      }
      expect(errors['obc'], `${tag}: OBC ${errors['obc']} vs magnitude ${errors['magnitude']}`).toBeLessThan(errors['magnitude']! * 0.8);
    }
  });

  it('writes N:M variants of a depthwise CNN and a transformer that meet the pattern PBH checks, with their facts in the metadata', async () => {
    for (const name of ['digits_mobilenet_v2', 'digits_vit']) {
      const out = path.join(dir, name);
      const r = await pbh(['prune', suiteModel(name), '--out', out, '--method', 'obc,magnitude', '--nm', NM.join(','),
        '--calibration', suiteData('digits_calibration_x.npy')]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`- name: ${name}_obc_2of4`);
      expect(r.stdout).not.toMatch(/\bNO\b/);
      for (const method of ['obc', 'magnitude']) {
        for (const nm of NM) {
          const [n, m] = nm.split(':').map(Number) as [number, number];
          const a = await analyzeModel(path.join(out, `${name}.${method}.${n}of${m}.onnx`));
          expect(nmPatternHolds(a.sparsity, n, m), `${name} ${method} ${nm}`).toBe(true);
          expect(a.optimization).toMatchObject({ method, kind: 'n_m', n, m, target: 1 - n / m, tool: 'pbh prune' });
          expect(a.optimization!.layers.length).toBe(a.sparsity.perTensor.length);
          expect(a.optimization!.calibration?.samples).toBe(1024);
          expect(a.family).toBe(name === 'digits_vit' ? 'vit' : 'mobilenet_v2');
        }
      }
    }
  });

  it('calibrates from a config, and pbh run records the pruned file\'s own facts', async () => {
    const digits = { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy') };
    const calibration = await writeConfig(dir, 'calibration.yaml', {
      name: 'calibration', dataset: digits, models: [{ name: 'vit', path: suiteModel('digits_vit') }],
      engines: [{ name: 'onnxruntime' }], batch_sizes: [1],
    });
    const out = path.join(dir, 'from-config');
    const r = await pbh(['prune', suiteModel('digits_vit'), '--out', out, '--unstructured', '0.5', '--calibration', calibration,
      '--calibration-samples', '128', '--name', 'vit']);
    expect(r.code, r.stderr).toBe(0);
    const file = path.join(out, 'vit.obc.sparse50.onnx');
    const a = await analyzeModel(file);
    expect(a.optimization?.calibration?.samples).toBe(128);
    expect(a.optimization?.calibration?.source).toContain("models[] entry vit's preprocessing");
    expect(a.sparsity.actual).toBeCloseTo(0.5, 2);

    const db = path.join(dir, 'pbh.duckdb');
    const config = await writeConfig(dir, 'run.yaml', {
      name: 'pruned', dataset: { ...digits, limit: 64 }, models: [{ name: 'vit_obc_sparse50', path: file, weights: 'trained' }],
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }], batch_sizes: [8], warmup_batches: 1, sessions: 1,
      scenario: { kind: 'single_stream', min_query_count: 1 },
    });
    const run = await pbh(['run', config, '--db', db]);
    expect(run.code, run.stderr).toBe(0);
    const rows = await queryJson<{ family: string; sparsity_kind: string; sparsity_target: number }>(db,
      'SELECT p.model_family AS family, m.sparsity_kind, m.sparsity_target FROM profiles p JOIN models m USING (model_sha256)');
    expect(rows).toEqual([{ family: 'vit', sparsity_kind: 'unstructured', sparsity_target: 0.5 }]);
  });

  it('refuses bad flags and inputs, naming the flag, value or layer and what to do', async () => {
    const model = path.join(dir, 'layer.onnx');
    const cases: [string[], RegExp][] = [
      [['--nm', '2:4'], /--method obc \(the default\) needs --calibration .*--method magnitude/],
      [['--nm', '4:2', '--method', 'magnitude'], /--nm "4:2": takes N:M with 1 <= N < M/],
      [['--unstructured', '75', '--method', 'magnitude'], /--unstructured "75": takes zero fractions strictly between 0 and 1/],
      [['--method', 'sparsegpt', '--nm', '2:4'], /--method "sparsegpt": takes magnitude, obc/],
      [['--method', 'magnitude'], /at least one variant/],
      [['--nm', '2:4', '--method', 'magnitude', '--layers', 'fc2'], /--layers fc2 matches no Conv\/Gemm\/MatMul node .*nodes fc/],
      [['--nm', '2:4', '--calibration', suiteData('digits_calibration_x.npy')], /--calibration .*samples are \[1, 8, 8\] each, the model input input takes \[24\]/],
    ];
    for (const [flags, message] of cases) {
      const r = await pbh(['prune', model, '--out', path.join(dir, 'refused'), ...flags]);
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
