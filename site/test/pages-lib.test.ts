import os from 'node:os';
import { profileVerdicts, summarize, type PublishedProfile } from '@pbh/core';
import { describe, expect, it } from 'vitest';
import { explainFailure } from '../src/lib/explain.js';
import { MAX_CI_HALF_WIDTH, MIN_SESSION_MS, noiseOf } from '../src/lib/noise.js';
import { pageError, scrubCommand, scrubWith } from '../src/lib/scrub.js';

describe('scrubWith: no absolute path of this machine on a page', () => {
  const scrub = scrubWith([{ dir: '/srv/pbh', prefix: '../' }]);

  it('shows paths under the config base as the config wrote them, others as their last two parts', () => {
    expect(scrub('could not load /srv/pbh/.cache/suite/models/m.onnx (batch 1)')).toBe('could not load ../.cache/suite/models/m.onnx (batch 1)');
    expect(scrub('--db /var/tmp/runs/2026/pbh.duckdb')).toBe('--db …/2026/pbh.duckdb');
    expect(scrub('/srv/pbh')).toBe('..');
  });

  it('leaves URLs, relative paths and words with slashes alone', () => {
    for (const text of ['see https://docs.openvino.ai/2024/index.html', 'configs/digits.yaml', '../.cache/x.onnx', 'fp32/bf16 and 2:4', 'MFLOP/s']) {
      expect(scrub(text)).toBe(text);
    }
  });

  it('never keeps the home folder', () => {
    const home = os.homedir();
    if (home.length <= 1) return;
    const homeScrub = scrubWith([{ dir: '/', prefix: '' }]);
    expect(homeScrub(`${home}/models/a/b.onnx`)).not.toContain(home);
  });

  it('resolves a command\'s climbing paths from the repository and shortens those outside it', () => {
    process.env.PBH_SITE_REPO = '/srv/pbh';
    try {
      expect(scrubCommand('npx pbh run configs/digits.yaml --db ../../tmp/work/pbh.duckdb --only abc')).toBe('npx pbh run configs/digits.yaml --db …/work/pbh.duckdb --only abc');
      expect(scrubCommand('npx pbh run ../pbh/configs/a.yaml')).toBe('npx pbh run ../pbh/configs/a.yaml');
    } finally {
      delete process.env.PBH_SITE_REPO;
    }
  });

  it('pageError drops the worker\'s stderr tail and a stack', () => {
    const identity = (t: string) => t;
    expect(pageError('tvm worker exited with code 1\n--- last stderr of tvm ---\nTraceback ...', identity)).toBe('tvm worker exited with code 1');
    expect(pageError('Error: boom\n    at f (/x/y.js:1:1)', identity)).toBe('Error: boom');
  });
});

/** The fields noiseOf reads, with sessions of the given wall times and the verdict core stores with them. */
function measured(wallsMs: number[], mean: number, low: number, high: number) {
  const sessions = wallsMs.map((ms, index) => ({ index, batches: 1, samples: 1, wall_ns: ms * 1e6, throughput_sps: mean, latency: {}, metrics: {} }));
  const throughput = { ...summarize([mean]), mean, ci95_low: low, ci95_high: high };
  return {
    throughput_mean: mean,
    throughput_ci95_low: low,
    throughput_ci95_high: high,
    profile: { sessions, verdicts: profileVerdicts({ scenario: null, interference: null, sessions, throughput }) },
  } as Parameters<typeof noiseOf>[0];
}

describe('noiseOf', () => {
  it('marks short sessions and a wide interval, each with its reason, and nothing else', () => {
    expect(noiseOf(measured([150, 160, 155], 1000, 980, 1020))).toMatchObject({ noisy: false, reasons: [] });
    const short = noiseOf(measured([25, 46], 1000, 990, 1010));
    expect(short.noisy).toBe(true);
    expect(short.reasons).toEqual([`sessions of 25–46 ms, under ${MIN_SESSION_MS} ms: timer and scheduler jitter are a large share of each`]);
    const half = MAX_CI_HALF_WIDTH * 1.5;
    const wide = noiseOf(measured([500, 500], 1000, 1000 * (1 - half), 1000 * (1 + half)));
    expect(wide.reasons).toHaveLength(1);
    expect(wide.brief).toBe('95% CI ±15% > ±10%');
    expect(noiseOf(measured([], 1000, 0, 2000)).reasons).toHaveLength(1);
  });
});

/**
 * A Profile that is not ok, with only the fields explainFailure reads set: the rest of PublishedProfile does not
 * bear on the explanation (the browser test builds real ones).
 */
function failed(status: PublishedProfile['status'], error: string, extra: { executed?: 'fp32' | 'bf16'; facts?: Record<string, unknown> } = {}): PublishedProfile {
  const precision = extra.executed ? { model: 'fp32', requested: extra.executed, executed: extra.executed, evidence: 'test' } : null;
  return {
    status, error, engine_entry: 'ov', engine_name: 'openvino', model_name: 'm', precision: extra.executed ?? null,
    profile: {
      engine: { precision, facts: extra.facts ?? {} },
      correctness: { reference_engine: 'onnxruntime', max_abs_error: 0.024, atol: 0.01, rtol: 0.01 },
      config: { experiment: { timeout_s: 30 } },
    },
  } as unknown as PublishedProfile; // only the fields above are read
}

describe('explainFailure', () => {
  const identity = (t: string) => t;
  it('names the cause and the fix from the Profile\'s facts', () => {
    const bf16 = explainFailure(failed('invalid_output', 'outputs differ', { executed: 'bf16' }), identity)!;
    expect(bf16.cause).toBe('precision');
    expect(bf16.words).toContain('ov executed bf16 while onnxruntime, the reference, ran the model\'s own fp32');
    expect(bf16.fix).toContain('`precision: fp32`');
    // The executed precision says fp32, the compiled model's facts say bf16: the facts win.
    expect(explainFailure(failed('invalid_output', 'outputs differ', { executed: 'fp32', facts: { inference_precision: 'bf16' } }), identity)!.cause).toBe('precision');
    expect(explainFailure(failed('invalid_output', 'outputs differ', { executed: 'fp32' }), identity)!.cause).toBe('invalid');
    const timeout = explainFailure(failed('timeout', 'cell ran past its timeout'), identity)!;
    expect(timeout).toMatchObject({ cause: 'timeout' });
    expect(timeout.words).toContain('30 s');
    expect(explainFailure(failed('failed', 'openvino failed "load" (RuntimeError): Unsupported operation: GridSample'), identity)!.cause).toBe('unsupported');
    expect(explainFailure(failed('failed', 'tvm worker exited with code 139 while "run" was pending'), identity)!.cause).toBe('crash');
    expect(explainFailure(failed('skipped', 'openvino is not installed. Fix: npx pbh doctor --fix'), identity)!.cause).toBe('unavailable');
    expect(explainFailure(failed('failed', 'interrupted (Ctrl-C)'), identity)!.cause).toBe('interrupted');
    expect(explainFailure({ ...failed('ok', ''), status: 'ok' }, identity)).toBeNull();
  });
});
