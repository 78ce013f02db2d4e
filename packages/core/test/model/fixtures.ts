/** Runs fixtures/make_fixtures.py into a temp dir and reads the figures it computed independently with onnx/numpy. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, '../../../..');
export const PYTHON = process.env['PBH_PYTHON'] ?? join(REPO_ROOT, '.venv/bin/python');
export const LIGHT_DIR = join(REPO_ROOT, '.venv/lib/python3.11/site-packages/onnx/backend/test/data/light');

export interface SparsityExpectation {
  actual: number;
  kind: 'dense' | 'unstructured' | 'n_m';
  n: number | null;
  m: number | null;
  patterns: { n: number; m: number; holds: boolean; saturation: number }[];
  per_tensor: Record<string, number>;
}

export interface FixtureModel {
  file: string;
  params?: number;
  flops?: number;
  flops_by_op?: Record<string, number>;
  shapes?: Record<string, number[]>;
  sparsity?: SparsityExpectation;
  quantization?: string;
  node_flops?: Record<string, number>;
  batch?: number;
  output_shape?: number[];
  external?: string[];
}

export interface Fixtures {
  dir: string;
  models: Record<string, FixtureModel>;
  light: Record<string, FixtureModel>;
  model(name: string): FixtureModel;
  cleanup(): Promise<void>;
}

export async function makeFixtures(options: { big?: boolean } = {}): Promise<Fixtures> {
  if (!existsSync(PYTHON)) throw new Error(`Python not found at ${PYTHON}; set PBH_PYTHON to a Python with onnx and numpy`);
  const dir = await mkdtemp(join(tmpdir(), 'pbh-model-fixtures-'));
  const args = [join(here, 'fixtures/make_fixtures.py'), dir, ...(options.big ? ['--big'] : [])];
  execFileSync(PYTHON, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 240_000 });
  const expected = JSON.parse(await readFile(join(dir, 'expected.json'), 'utf8')) as {
    models: Record<string, FixtureModel>;
    light: Record<string, FixtureModel>;
  };
  return {
    dir,
    models: expected.models,
    light: expected.light,
    model(name) {
      const m = expected.models[name];
      if (!m) throw new Error(`fixture ${name} was not generated`);
      return m;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
