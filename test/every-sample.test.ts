import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { suiteData, suiteModel } from './suite.js';

describe('every sample counts', () => {
  it('scores all 200 samples at batch sizes 1, 7 and 64 to the same accuracy, outside the timed sessions', async () => {
    const dir = await tempDir();
    const db = path.join(dir, 'pbh.duckdb');
    const config = await writeConfig(dir, 'every-sample.yaml', {
      name: 'every-sample',
      dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 200 },
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
      engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }],
      batch_sizes: [1, 7, 64],
      warmup_batches: 1,
      sessions: 2,
      scorers: ['top1'],
      layer_profile: { enabled: false },
      // One pass over the data is one session: no duration floor, no early-stopping count.
      scenario: { kind: 'single_stream', min_query_count: 1, min_duration_ms: 0 },
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code, r.stderr).toBe(0);
    const rows = await queryJson<{ batch_size: number; top1: number; timed: number; scored: number; last_batch: string }>(
      db,
      `SELECT batch_size, top1, samples_per_session AS timed,
         json_extract(profile_json, '$.workload.samples_scored')::INTEGER AS scored,
         json_extract_string(profile_json, '$.workload.last_batch') AS last_batch
       FROM profiles ORDER BY batch_size`,
    );
    // 200 = 28 x 7 + 4 = 3 x 64 + 8: the whole batches are timed, every sample is scored, the last batch at its size.
    expect(rows.map((x) => [x.batch_size, x.timed, x.scored, x.last_batch])).toEqual([
      [1, 200, 200, 'none'],
      [7, 196, 200, 'dynamic'],
      [64, 192, 200, 'dynamic'],
    ]);
    expect(new Set(rows.map((x) => x.top1)).size).toBe(1);
  });
});
