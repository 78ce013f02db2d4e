import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProfileSchema, type Boundary, type Profile, type Stats, type SystemInfo } from '../../src/contracts/profile.js';
import type { RunStart } from '../../src/store/index.js';

const BOUNDARIES = ['engine', 'predict', 'end_to_end', 'model_only'] as const satisfies readonly Boundary[];
type FixtureBoundary = (typeof BOUNDARIES)[number];

/** Summary statistics with linear-interpolation percentiles, enough to make a Profile look measured. */
export function statsOf(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / n;
  const variance = n > 1 ? sorted.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1) : 0;
  const std = Math.sqrt(variance);
  const at = (q: number): number => {
    const position = (n - 1) * q;
    const low = Math.floor(position);
    const high = Math.min(n - 1, low + 1);
    return (sorted[low] ?? 0) + ((sorted[high] ?? 0) - (sorted[low] ?? 0)) * (position - low);
  };
  const half = n > 1 ? (1.96 * std) / Math.sqrt(n) : 0;
  return {
    n, mean, std, variance, min: sorted[0] ?? 0, p50: at(0.5), p90: at(0.9), p95: at(0.95), p99: at(0.99),
    max: sorted[n - 1] ?? 0, ci95_low: mean - half, ci95_high: mean + half,
  };
}

export const SYSTEM: SystemInfo = {
  hostname: 'bench-01',
  cpu_vendor: 'GenuineIntel',
  cpu_model: 'Intel(R) Xeon(R) Platinum 8480+',
  cpu_cores: 2,
  cpu_physical_cores: 1,
  cpu_ghz: 2.0,
  cpu_flags: 'avx2 avx512f fma',
  memory_bytes: 8 * 2 ** 30,
  gpus: [{ vendor: 'NVIDIA', model: 'H200', vram_mb: 143_771 }],
  os: 'Ubuntu 24.04',
  kernel: '6.8.0',
  arch: 'x64',
  node_version: 'v20.19.0',
  python_version: '3.12.3',
  harness_version: '0.1.0',
  git_sha: 'b4a01d4',
  peak_flops: 2.048e12,
  peak_flops_formula: 'cores * GHz * 2 FMA * 16 fp32 lanes * 2 units',
};

export function runStart(runId: string, referenceEngine = 'onnxruntime'): RunStart {
  return {
    run_id: runId,
    name: 'sparsity-study',
    started_at: '2026-03-01T10:00:00.000Z',
    config: { name: 'sparsity-study', reference_engine: referenceEngine, batch_sizes: [1, 8], sessions: 5 },
    command: 'pbh run examples/sparsity.yaml',
    system: SYSTEM,
  };
}

export interface ProfileShape {
  profileId: string;
  runId: string;
  engine?: string;
  model?: string;
  batchSize?: number;
  device?: string;
  status?: Profile['status'];
  /** Mean predict latency per batch in ns; throughput follows from it. */
  meanNs?: number;
  sessions?: number;
  batchesPerSession?: number;
  layers?: Profile['layers'];
}

/** A Profile shaped like the harness writes one; sessions x batches x 4 boundaries raw samples. */
export function makeProfile(shape: ProfileShape): Profile {
  const engine = shape.engine ?? 'onnxruntime';
  const model = shape.model ?? 'digits-cnn';
  const batchSize = shape.batchSize ?? 8;
  const device = shape.device ?? 'cpu';
  const status = shape.status ?? 'ok';
  const meanNs = shape.meanNs ?? 250_000;
  const sessionCount = shape.sessions ?? 5;
  const batchesPerSession = shape.batchesPerSession ?? 2500;
  const measured = status === 'ok';

  const samples: Profile['samples'] = [];
  const byBoundary = new Map<Boundary, number[]>(BOUNDARIES.map((b) => [b, []]));
  const sessions: Profile['sessions'] = [];
  let seed = 12345;
  const jitter = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let session = 0; measured && session < sessionCount; session++) {
    const sessionValues = new Map<Boundary, number[]>(BOUNDARIES.map((b) => [b, []]));
    for (let batch = 0; batch < batchesPerSession; batch++) {
      const predict = Math.round(meanNs * (0.9 + 0.2 * jitter()));
      const values: Record<FixtureBoundary, number> = {
        model_only: Math.round(predict * 0.9),
        engine: Math.round(predict * 0.95),
        predict,
        end_to_end: predict + 20_000 + Math.round(1000 * jitter()),
      };
      for (const boundary of BOUNDARIES) {
        samples.push({ session, batch, boundary, ns: values[boundary] });
        byBoundary.get(boundary)?.push(values[boundary]);
        sessionValues.get(boundary)?.push(values[boundary]);
      }
    }
    const wallNs = (sessionValues.get('end_to_end') ?? []).reduce((sum, v) => sum + v, 0);
    sessions.push({
      index: session,
      batches: batchesPerSession,
      samples: batchesPerSession * batchSize,
      wall_ns: wallNs,
      throughput_sps: (batchesPerSession * batchSize * 1e9) / wallNs,
      latency: Object.fromEntries(BOUNDARIES.map((b) => [b, statsOf(sessionValues.get(b) ?? [])])),
      metrics: { peak_rss_mb: 180 + session, cpu_time_ms: wallNs / 1e6 },
    });
  }
  const latency: Profile['latency'] = measured
    ? Object.fromEntries(BOUNDARIES.map((b) => [b, statsOf(byBoundary.get(b) ?? [])]))
    : {};
  const throughput = measured ? statsOf(sessions.map((s) => s.throughput_sps)) : null;

  const profile: Profile = {
    profile_id: shape.profileId,
    run_id: shape.runId,
    cell_key: `${model}|${engine}|${device}|b${batchSize}`,
    cell_fingerprint: null,
    verdicts: null,
    rounds: null,
    created_at: '2026-03-01T10:05:00.123Z',
    status,
    error: measured ? null : `${engine} failed to load ${model}`,
    error_detail: measured ? null : 'worker stderr:\nRuntimeError: unsupported op "Foo"',
    model: {
      name: model,
      family: 'cnn',
      framework: 'numpy',
      weights: 'trained',
      path: `models/${model}.onnx`,
      sha256: `sha-${model}`,
      size_bytes: 1_234_567,
      opset: 17,
      inputs: [{ name: 'x', dtype: 'float32', shape: ['N', 1, 8, 8] }],
      outputs: [{ name: 'logits', dtype: 'float32', shape: ['N', 10] }],
      parameters: 308_394,
      flops_per_sample: 1.25e7,
      op_census: { Conv: 2, Relu: 3, Gemm: 1, MaxPool: 1 },
      sparsity: { actual: 0.5, target: 0.5, kind: 'n_m', n: 2, m: 4, nm_pattern_holds: true, method: 'magnitude' },
      quantization: null,
    },
    model_name: model,
    engine: {
      name: engine,
      label: null,
      version: '1.30.0',
      device,
      options: { intraOpNumThreads: 2, graphOptimizationLevel: 'all' },
      compile_ms: 42.5,
      facts: { providers: ['CPUExecutionProvider'] },
      precision: { model: 'fp32', requested: 'fp32', executed: 'fp32', evidence: 'fixture' },
      process: 'harness',
      binding: 'onnxruntime-node',
    },
    dataset: {
      name: 'digits',
      kind: 'npy',
      manifest_sha256: 'abc123',
      samples: 512,
      preprocess: [{ scale: 1 / 255 }, { layout: 'NCHW' }],
    },
    workload: {
      batch_size: batchSize,
      warmup_batches: 5,
      sessions: sessionCount,
      samples_per_session: batchesPerSession * batchSize,
      samples_scored: 512,
      last_batch: 'none',
      threads: 2,
      scenario: 'offline',
      seed: 0,
    },
    correctness: measured
      ? { reference_engine: 'onnxruntime', max_abs_error: 1.2e-6, max_rel_error: 3.4e-5, atol: 1e-3, rtol: 1e-3, precision: 'fp32', tolerance_rule: 'config tolerance', passed: true, outputs: [] }
      : null,
    throughput,
    // No headline, scenario or generation block: the schema's defaults, as a Profile from before they existed reads.
    headline_boundary: null,
    scenario: null,
    generation: null,
    latency,
    metrics: measured ? { peak_rss_mb: 184.25, cpu_time_ms: 1234.5, cpu_utilisation: 1.02 } : {},
    interference: measured ? { other_cpu_share: 0.02, steal_share: 0, load_avg_1m: 1.1, busy: false, threshold: 0.1, sessions: [{ index: 0, other_cpu_share: 0.02, steal_share: 0, load_avg_1m: 1.1 }] } : null,
    energy: null,
    scores: measured
      ? [
          { metric: 'top1', value: 0.9712, samples: 512, higher_is_better: true },
          { metric: 'top5', value: 0.998, samples: 512, higher_is_better: true },
        ]
      : [],
    achieved_flops: measured ? ((throughput?.mean ?? 0) * 1.25e7) : null,
    peak_fraction: measured ? ((throughput?.mean ?? 0) * 1.25e7) / 2.048e12 : null,
    peak: measured ? { precision: 'fp32', ops_per_s: 2.048e12, formula: 'test' } : null,
    sessions,
    samples,
    layers: shape.layers ?? [
      { name: 'conv1', op_type: 'Conv', mean_ns: 80_000, calls: 10, share: 0.4, input_shapes: '[8,1,8,8]', output_shapes: '[8,16,8,8]' },
      { name: 'relu1', op_type: 'Relu', mean_ns: 10_000, calls: 10, share: 0.05, input_shapes: null, output_shapes: null },
      { name: 'fc', op_type: 'Gemm', mean_ns: 110_000, calls: 10, share: 0.55, input_shapes: '[8,256]', output_shapes: '[8,10]' },
    ],
    system: SYSTEM,
    config: { model, engine, batch_size: batchSize },
    command: 'pbh run examples/sparsity.yaml',
  };
  return ProfileSchema.parse(profile);
}

/** A fresh temp directory, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'pbh-store-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
