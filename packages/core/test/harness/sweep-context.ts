import os from 'node:os';
import path from 'node:path';
import type { Engine } from '../../src/contracts/engine.js';
import type { Metric } from '../../src/contracts/metric.js';
import { ExperimentSchema, type ExperimentInput } from '../../src/config/schema.js';
import { expandCells, type Cell } from '../../src/config/keys.js';
import { loadDataset } from '../../src/dataset/load.js';
import type { SweepContext } from '../../src/harness/context.js';
import { ReferenceOutputs } from '../../src/harness/reference.js';
import { builtinScorers } from '../../src/scorers/index.js';
import { Registry } from '../../src/plugins/registry.js';
import type { SystemInfo } from '../../src/contracts/profile.js';
import { fakeClock } from './fake-engine.js';

/** Committed fixtures (fixtures/make_fixtures.py): a real ONNX file to analyse, 64 real digits. */
const FIXTURES = path.resolve(import.meta.dirname, 'fixtures');

const SYSTEM: SystemInfo = {
  hostname: 'test', cpu_vendor: 'test', cpu_model: 'test', cpu_cores: 2, cpu_physical_cores: 2, cpu_ghz: 2,
  cpu_flags: '', memory_bytes: 1, gpus: [], os: 'linux', kernel: 'test', arch: 'x64', node_version: process.version,
  python_version: null, harness_version: 'test', git_sha: null, peak_flops: 1e9, peak_flops_formula: 'test',
};

export interface FakeSweep {
  ctx: SweepContext;
  cells: Cell[];
}

/**
 * A sweep over fake engines: `ref` is the reference engine unless the experiment says otherwise. 64 digits
 * samples, a small classifier's file for model facts, and the fake clock.
 */
export async function fakeSweep(engines: Engine[], overrides: Partial<ExperimentInput> = {}, metrics: Metric[] = []): Promise<FakeSweep> {
  const raw: ExperimentInput = {
    name: 'harness-test',
    dataset: { kind: 'npy', inputs: { input: 'digits_x.npy' }, labels: 'digits_y.npy', limit: 64 },
    models: [{ name: 'digits_gemm', path: 'digits_gemm.onnx', weights: 'trained' }],
    engines: engines.map((e) => ({ name: e.name })),
    batch_sizes: [8],
    warmup_batches: 2,
    sessions: 3,
    timeout_s: 30,
    scorers: ['top1'],
    metrics: metrics.map((m) => m.name),
    reference_engine: 'ref',
    // One pass over the resident batches per session, as the counts in the tests expect.
    scenario: { kind: 'single_stream', min_duration_ms: 0, min_query_count: 1 },
    layer_profile: { enabled: false },
    ...overrides,
  };
  const experiment = ExperimentSchema.parse(raw);
  const registry = new Registry();
  registry.add({ name: 'fakes', engines, scorers: builtinScorers, metrics });
  const workRoot = path.join(os.tmpdir(), `pbh-harness-test-${process.pid}`);
  const ctx: SweepContext = {
    runId: 'run-test',
    loaded: { file: path.join(FIXTURES, 'harness-test.yaml'), dir: FIXTURES, experiment, raw: raw as Record<string, unknown> },
    registry,
    system: SYSTEM,
    dataset: await loadDataset(experiment.dataset, FIXTURES),
    models: new Map(),
    probes: new Map(),
    reference: new ReferenceOutputs(registry, experiment.reference_engine, workRoot, experiment.seed),
    workRoot,
    command: (key) => `pbh run test --only ${key}`,
    clock: fakeClock.now,
  };
  return { ctx, cells: expandCells(experiment) };
}
