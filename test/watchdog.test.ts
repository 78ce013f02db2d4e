import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

describe('an in-process engine that blocks the harness thread', () => {
  it('cannot outlive its timeout: the watchdog keeps its timeout Profile and ends the process', async () => {
    const dir = await tempDir();
    const db = path.join(dir, 'pbh.duckdb');
    const config = await writeConfig(dir, 'busy.yaml', {
      name: 'busy',
      plugins: [path.join(ROOT, 'test', 'fixtures', 'busy-loop-plugin.mjs')],
      dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 32 },
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
      // The cell before the busy one runs in process: a one-second timeout leaves no room for a worker's start on a
      // loaded machine, and this test is about the watchdog, not the worker.
      engines: [{ name: 'onnxruntime', process: 'harness' }, { name: 'onnxruntime-busy' }],
      // Each cell alone, so the one before is stored before the busy one starts: interleaved, the two would be one
      // group and the watchdog's kill would take the first's unstored rounds with it (the message says so).
      // Two sessions, as asked: the interval rule's extra rounds would not fit the one-second timeout on a loaded machine.
      rounds: { interleave: false, max_sessions: 2 },
      batch_sizes: [8],
      warmup_batches: 1,
      sessions: 2,
      timeout_s: 1,
      scorers: ['top1'],
      layer_profile: { enabled: false },
    });
    const started = Date.now();
    const r = await pbh(['run', config, '--db', db], { timeoutMs: 60_000 });
    expect(r.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(r.stderr).toMatch(/held the harness's thread 5 s past its timeout of 1 s .*PBH ended the process.*kept as .*pbh\.duckdb\.unstored/s);
    const kept = readdirSync(`${db}.unstored`);
    expect(kept).toHaveLength(1);
    const file = JSON.parse(readFileSync(path.join(`${db}.unstored`, kept[0]!), 'utf8')) as { profile: { status: string; engine: { name: string } } };
    expect(file.profile).toMatchObject({ status: 'timeout', engine: { name: 'onnxruntime-busy' } });
    // The cell before it was measured and stored.
    expect(await queryJson(db, 'SELECT engine_name, status FROM profiles')).toEqual([{ engine_name: 'onnxruntime', status: 'ok' }]);
  });
});
