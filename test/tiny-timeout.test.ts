import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { suiteData, suiteModel } from './suite.js';

describe('a timeout shorter than any cell', () => {
  it('stores a timeout Profile for every engine, in process or in a worker, and the sweep goes on', async () => {
    const dir = await tempDir();
    const db = path.join(dir, 'pbh.duckdb');
    const config = await writeConfig(dir, 'tiny.yaml', {
      name: 'tiny-timeout',
      dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 64 },
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
      engines: [{ name: 'openvino' }, { name: 'tvm' }, { name: 'onnxruntime' }],
      batch_sizes: [8],
      sessions: 1,
      timeout_s: 0.3,
      scorers: ['top1'],
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.stderr).not.toMatch(/Unhandled|at .*\.js:\d+/);
    expect(r.code).toBe(1);
    const rows = await queryJson<{ engine_name: string; status: string; error: string }>(db, 'SELECT engine_name, status, error FROM profiles ORDER BY created_at');
    // The workers cannot even start in 0.3 s; onnxruntime in process may finish the cell in time.
    expect(rows.map((x) => x.engine_name)).toEqual(['openvino', 'tvm', 'onnxruntime']);
    for (const x of rows.slice(0, 2)) {
      expect(x.status).toBe('timeout');
      expect(x.error).toMatch(/ran past its timeout of 0\.3 s \(timeout_s in the config\)/);
    }
    expect(['ok', 'timeout']).toContain(rows[2]!.status);
  });
});
