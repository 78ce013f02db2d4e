import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig, writeNpy } from './helpers.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

// Core's echo worker engines, listed under plugins: by their manifest: options.mode makes the worker misbehave (kill
// itself, hang, ...) so faults can be driven through pbh run; echo-missing-runtime declares a module that is not there.
const plugin = path.join(ROOT, 'packages', 'core', 'test', 'worker', 'fixtures', 'pbh-engine.json');
let dir: string;
let celu: string;

beforeAll(async () => {
  dir = await tempDir('pbh-faults-');
  const out = execFileSync(path.join(ROOT, '.venv', 'bin', 'python'), [path.join(ROOT, 'test', 'fixtures', 'make_models.py'), dir], { encoding: 'utf8' });
  celu = out.split('\n').find((l) => l.endsWith('celu.onnx'))!;
});

const workersAlive = (): string[] => {
  try {
    return execFileSync('pgrep', ['-f', 'pbh_worker'], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

type Row = { engine_name: string; status: string; error: string; error_detail: string | null };

describe('native worker faults become Profiles and the sweep goes on', () => {
  it('a worker killed mid-run, a hung worker, a missing runtime and a rejected model', async () => {
    const before = workersAlive().length;
    const db = path.join(dir, 'faults.duckdb');
    const digits = { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 16 };
    const common = { plugins: [plugin], dataset: digits, batch_sizes: [4], warmup_batches: 1, sessions: 1, reference_engine: 'echo' };
    const model = { name: 'digits_cnn', path: suiteModel('digits_cnn') };
    const engines = [
      { name: 'echo', label: 'killed', options: { mode: 'kill' } },
      { name: 'echo', label: 'hung', options: { mode: 'sleep', sleep_s: 60 } },
      { name: 'echo-missing-runtime' },
      { name: 'echo', label: 'fine' },
    ];
    const first = await writeConfig(dir, 'faults.yaml', { name: 'faults', ...common, models: [model], engines, timeout_s: 4 });
    const r = await pbh(['run', first, '--db', db]);
    expect(r.code).toBe(1);
    const rows = await queryJson<Row>(db, 'SELECT engine_name, status, error, error_detail FROM profiles ORDER BY created_at');
    expect(rows.map((x) => x.status)).toEqual(['failed', 'timeout', 'skipped', 'ok']);
    expect(rows[0]!.error).toMatch(/killed by SIGKILL|signal SIGKILL|SIGKILL/);
    expect(rows[0]!.error).toContain('echo_worker: killing myself');
    expect(rows[1]!.error).toMatch(/ran past its timeout of 4 s/);
    expect(rows[1]!.error_detail).toContain('echo_worker: sleeping');
    expect(rows[2]!.error).toMatch(/needs the Python module 'pbh_no_such_runtime'/);
    expect(rows[2]!.error).toMatch(/Fix: npx pbh doctor --fix/);

    const x4 = path.join(dir, 'x4.npy');
    await writeNpy(x4, '<f4', [8, 4], Array.from({ length: 32 }, (_, i) => i / 32));
    const rejected = await writeConfig(dir, 'tvm.yaml', {
      name: 'rejected',
      dataset: { kind: 'npy', inputs: { x: x4 } },
      models: [{ name: 'celu', path: celu }],
      engines: [{ name: 'tvm', options: { cache: false } }],
      batch_sizes: [4],
      warmup_batches: 0,
      sessions: 1,
      reference_engine: 'tvm',
    });
    const t = await pbh(['run', rejected, '--db', db]);
    expect(t.code).toBe(1);
    const tvm = await queryJson<Row>(db, "SELECT engine_name, status, error, error_detail FROM profiles WHERE engine_name = 'tvm'");
    expect(tvm[0]!.status).toBe('failed');
    expect(tvm[0]!.error).toMatch(/tvm could not load .*celu\.onnx[\s\S]*Celu/);
    expect(workersAlive().length).toBeLessThanOrEqual(before);
  });
});
