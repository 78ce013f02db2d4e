// Fault suite, --resume (issue 41, defect 1): a stored cell whose model entry or settings outside the cell key changed
// is run again, saying why, never kept as if current. test/cli-run.test.ts changes the scorers, the model file and the
// dataset; this changes the model entry (its inputs, its weights label), the tolerance and performance_samples, and the
// engine's version (onnxruntime behind a plugin whose probe reports the version it is told).
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeConfig } from '../helpers.js';
import { ROOT } from '../suite.js';
import { exitOf, inSandbox, oneCell, printTable, record, sandbox, storedProfiles } from './sandbox.js';

afterAll(() => printTable('PBH fault suite: --resume'));

type Config = Record<string, unknown> & { models: Record<string, unknown>[] };

/** Each step's config from the one before: the change --resume must see. */
const CHANGES: [string, (c: Config) => Config][] = [
  ["the model's inputs (zeros instead of the images)", (c) => ({ ...c, models: [{ ...c.models[0], inputs: { input: { zeros: true } } }] })],
  ["the model's weights label", (c) => ({ ...c, models: [{ ...c.models[0], weights: 'random' }] })],
  ['the tolerance', (c) => ({ ...c, tolerance: { atol: 1e-2, rtol: 1e-2 } })],
  ['performance_samples', (c) => ({ ...c, performance_samples: 16 })],
];

describe('--resume after a change outside the cell key', () => {
  it('runs the cell again for each change, saying why; an unchanged cell is kept; every run is a stored Profile', async () => {
    // One session, no layer profile: the case is about which cells run. Every step's config is written first
    // (c0.yaml, c1.yaml, ...), so the runs are all that change the sandbox.
    const configs = CHANGES.reduce<Config[]>((all, [, change]) => [...all, change(all.at(-1)!)], [
      {
        ...(oneCell() as Config),
        engines: [{ name: 'onnxruntime_versioned', options: { intraOpNumThreads: 1 } }],
        plugins: [path.join(ROOT, 'test', 'fixtures', 'versioned-onnx-plugin.mjs')],
        sessions: 1,
        layer_profile: { enabled: false },
      },
    ]);
    const s = await sandbox('resume', (p) => Promise.all(configs.map((c, i) => writeConfig(p.work, `c${i}.yaml`, c))));
    const run = (step: number, version?: string) =>
      inSandbox(s, ['run', path.join(s.work, `c${step}.yaml`), '--db', s.db, '--resume'], version ? { env: { PBH_TEST_ENGINE_VERSION: version } } : {});
    const first = await run(0);
    expect(first.code, first.stderr).toBe(0);
    const same = await run(0);
    expect(same.stdout).toMatch(/1 already stored \(--resume\)/);
    let measured = 1;
    const exits = [first, same].map(exitOf);
    for (const [step, [what]] of CHANGES.entries()) {
      const r = await run(step + 1);
      exits.push(exitOf(r));
      expect(r.code, `${what}: ${r.stderr}`).toBe(0);
      expect(r.stdout, what).toMatch(/digits_cnn x onnxruntime_versioned x b8: its configuration changed/);
      expect(r.stdout, what).toMatch(/1 stored but changed, so run again \(--resume\)/);
      measured += 1;
    }
    // The last config again, on an engine that now reports another version.
    const upgraded = await run(CHANGES.length, '99.0.0-test');
    exits.push(exitOf(upgraded));
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(upgraded.stdout).toMatch(/engine onnxruntime_versioned is 99\.0\.0-test now, was \d+\.\d+/);
    measured += 1;
    const found = await storedProfiles(s);
    const row = record(s, `--resume after ${CHANGES.length + 1} changes (inputs, weights, tolerance, performance_samples, engine version)`, exits.join(','), measured, found.length);
    expect(found.map((p) => p.status)).toEqual(Array.from({ length: measured }, () => 'ok'));
    expect(row.changed).toEqual([]);
    expect(row.tempLeft).toBe(0);
  });
});
