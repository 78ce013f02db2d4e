import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

describe('a Profile the store refuses', () => {
  it('is kept as JSON beside the database, reported, and the sweep goes on', async () => {
    const dir = await tempDir();
    const db = path.join(dir, 'pbh.duckdb');
    const config = await writeConfig(dir, 'refusal.yaml', {
      name: 'refusal',
      plugins: [path.join(ROOT, 'test', 'fixtures', 'unstorable-facts-plugin.mjs')],
      dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 32 },
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
      engines: [{ name: 'onnxruntime-bigint-facts' }, { name: 'onnxruntime' }],
      batch_sizes: [8],
      warmup_batches: 1,
      sessions: 1,
      scorers: ['top1'],
      layer_profile: { enabled: false },
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the store refused Profile .* \(digits_cnn x onnxruntime-bigint-facts x b8\): .*BigInt.*kept as .*pbh\.duckdb\.unstored.*the sweep goes on/s);
    const kept = readdirSync(`${db}.unstored`);
    expect(kept).toHaveLength(1);
    const file = JSON.parse(readFileSync(path.join(`${db}.unstored`, kept[0]!), 'utf8')) as { store_error: string; profile: { status: string; engine: { facts: { handle: string } } } };
    expect(file.profile.status).toBe('ok');
    expect(file.profile.engine.facts.handle).toBe('1');
    // The next cell was measured and stored.
    expect(await queryJson(db, 'SELECT engine_name, status FROM profiles')).toEqual([{ engine_name: 'onnxruntime', status: 'ok' }]);
  });
});
