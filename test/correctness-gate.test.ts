import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { suiteData, suiteModel } from './suite.js';

describe('correctness before speed', () => {
  it('stores a deliberately wrong engine as invalid_output with its error, and never ranks it', async () => {
    const dir = await tempDir('pbh-gate-');
    const db = path.join(dir, 'gate.duckdb');
    const config = await writeConfig(dir, 'gate.yaml', {
      name: 'gate',
      plugins: [path.resolve(import.meta.dirname, 'fixtures', 'wrong-output-plugin.mjs')],
      dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 32 },
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
      engines: [{ name: 'onnxruntime' }, { name: 'onnxruntime-shifted' }],
      batch_sizes: [8],
      warmup_batches: 1,
      sessions: 1,
      scorers: ['top1'],
      tolerance: { atol: 1e-4, rtol: 1e-4 },
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code).toBe(1);
    const rows = await queryJson<{ engine_name: string; status: string; error: string | null; max_abs: number; passed: boolean }>(
      db,
      "SELECT engine_name, status, error, json_extract(profile_json, '$.correctness.max_abs_error')::DOUBLE AS max_abs, json_extract(profile_json, '$.correctness.passed')::BOOLEAN AS passed FROM profiles ORDER BY engine_name",
    );
    expect(rows[0]).toMatchObject({ engine_name: 'onnxruntime', status: 'ok' });
    expect(rows[1]).toMatchObject({ engine_name: 'onnxruntime-shifted', status: 'invalid_output', passed: false });
    expect(rows[1]!.max_abs).toBeCloseTo(0.5, 5);
    expect(rows[1]!.error).toMatch(/outputs differ from onnxruntime on the first batch: max abs error 5\.000e-1/);
    const ranked = await queryJson<{ engine: string }>(db, 'SELECT engine FROM leaderboard');
    expect(ranked.map((x) => x.engine)).toEqual(['onnxruntime']);
    const samples = await queryJson<{ n: number }>(db, "SELECT count(*)::INTEGER AS n FROM samples JOIN profiles USING (profile_id) WHERE engine_name = 'onnxruntime-shifted'");
    expect(samples[0]!.n).toBe(0);
  });
});
