import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { ROOT, suiteData, suiteModel } from './suite.js';

/** The files docs/adding-an-engine.md shows, exactly as a reader would copy them. */
function filesOfTheGuide(): Map<string, string> {
  const guide = readFileSync(path.join(ROOT, 'docs', 'adding-an-engine.md'), 'utf8');
  const files = new Map<string, string>();
  for (const m of guide.matchAll(/```\w+ title=([\w.-]+)\n([\s\S]*?)```/g)) files.set(m[1]!, m[2]!);
  return files;
}

describe('docs/adding-an-engine.md', () => {
  it('shows a complete engine in one Python file of at most 100 lines, and its manifest', () => {
    const files = filesOfTheGuide();
    expect([...files.keys()].sort()).toEqual(['onnx_reference.py', 'pbh-engine.json']);
    expect(files.get('onnx_reference.py')!.trimEnd().split('\n').length).toBeLessThanOrEqual(100);
  });

  it("runs the guide's engine end to end from a folder named under plugins:, ranked beside a bundled engine", async () => {
    const dir = await tempDir('pbh-guide-');
    const folder = path.join(dir, 'engines', 'onnx-reference');
    await mkdir(folder, { recursive: true });
    for (const [name, text] of filesOfTheGuide()) await writeFile(path.join(folder, name), text);
    const db = path.join(dir, 'guide.duckdb');
    const config = await writeConfig(dir, 'guide.yaml', {
      name: 'guide',
      plugins: ['./engines/onnx-reference'],
      dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 64 },
      models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
      engines: [{ name: 'onnxruntime' }, { name: 'onnx-reference' }],
      batch_sizes: [8],
      warmup_batches: 1,
      sessions: 2,
      scorers: ['top1'],
    });
    const r = await pbh(['run', config, '--db', db]);
    expect(r.code, r.stderr).toBe(0);
    const rows = await queryJson<{ engine_name: string; status: string; profile_json: string }>(db, 'SELECT engine_name, status, profile_json FROM profiles');
    const profile = (engine: string) => {
      const row = rows.find((x) => x.engine_name === engine)!;
      const p = JSON.parse(row.profile_json) as {
        engine: { precision: { executed: string }; binding: string; version: string };
        scores: { metric: string; value: number }[];
        layers: unknown[];
      };
      return { status: row.status, executed: p.engine.precision.executed, binding: p.engine.binding, version: p.engine.version, top1: p.scores.find((s) => s.metric === 'top1')!.value, layers: p.layers.length };
    };
    const ours = profile('onnx-reference');
    expect(ours).toMatchObject({ status: 'ok', executed: 'fp32', binding: 'onnx (Python) in a pbh worker' });
    expect(ours.version).toMatch(/^\d+\.\d+/);
    expect(ours.layers).toBeGreaterThan(3);
    expect(ours.top1).toBeCloseTo(profile('onnxruntime').top1, 6);
    // A bad option is refused by the manifest's schema before anything runs, naming it.
    const bad = await writeConfig(dir, 'bad.yaml', { ...(await import('yaml')).parse(readFileSync(config, 'utf8')), engines: [{ name: 'onnx-reference', options: { verbos: 1 } }] });
    const refused = await pbh(['run', bad, '--db', path.join(dir, 'bad.duckdb')]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toMatch(/verbos/);
  });
});
