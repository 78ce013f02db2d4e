import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnergySchema, type Energy } from '../packages/core/src/contracts/energy.js';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { suiteData, suiteModel } from './suite.js';

interface Row {
  status: string;
  engine: string;
  energy: string | null;
  j: number | null;
  method: string | null;
}

async function run(dir: string, name: string, energy: Record<string, unknown>, flags: string[] = []): Promise<(Row & { parsed: Energy | null })[]> {
  const db = path.join(dir, `${name}.duckdb`);
  const config = await writeConfig(dir, `${name}.yaml`, {
    name: `energy-${name}`,
    dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 128 },
    models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
    engines: [{ name: 'onnxruntime' }, { name: 'openvino' }],
    batch_sizes: [1, 8],
    sessions: 2,
    scenario: { kind: 'single_stream', min_duration_ms: 300 },
    energy,
  });
  const r = await pbh(['run', config, '--db', db, ...flags]);
  expect(r.code, r.stderr).toBe(0);
  const rows = await queryJson<Row>(
    db,
    "SELECT p.status, p.engine_name AS engine, json_extract(p.profile_json, '$.energy')::VARCHAR AS energy, l.energy_j_per_sample AS j, l.energy_method AS method FROM profiles p LEFT JOIN leaderboard l USING (profile_id)",
  );
  return rows.map((row) => ({ ...row, parsed: row.energy === null ? null : EnergySchema.parse(JSON.parse(row.energy)) }));
}

describe('pbh run: every ok Profile carries energy with its method, or NULL with the reason, never 0', () => {
  it('on this machine: RAPL where powercap reads, else the TDP estimate labelled as one; --tdp-w sets the TDP', async () => {
    const dir = await tempDir('pbh-energy-run-');
    const rows = await run(dir, 'default', {}, ['--tdp-w', '120']);
    const ok = rows.filter((r) => r.status === 'ok');
    expect(ok.length).toBeGreaterThanOrEqual(2);
    for (const { parsed: e, j, method, engine } of ok) {
      expect(e, engine).not.toBeNull();
      if (e!.joules_per_sample === null) expect(e!.reason, engine).toMatch(/\w/);
      else expect(e!.joules_per_sample).toBeGreaterThan(0);
      expect(j).toBe(e!.joules_per_sample);
      expect(method).toBe(e!.method);
      for (const d of e!.domains) expect(d.joules === null ? d.reason : d.joules).toBeTruthy();
      if (!existsSync('/sys/class/powercap')) {
        expect(e!.method).toBe('estimated_tdp');
        expect(e!.reason).toMatch(/powercap is absent.*estimated from TDP/);
        expect(e!.tdp).toMatchObject({ watts: 120, source: 'user' });
      }
    }
    console.log(ok.map((r) => `${r.engine}: ${r.parsed!.joules_per_sample?.toExponential(3)} J/sample, ${r.parsed!.method}`).join('; '));
  }, 600_000);

  it('energy collection off says so on every Profile', async () => {
    const dir = await tempDir('pbh-energy-off-');
    const rows = await run(dir, 'off', { enabled: false });
    for (const { parsed: e, j } of rows.filter((r) => r.status === 'ok')) {
      expect(j).toBeNull();
      expect(e!.reason).toMatch(/energy collection is off/);
    }
  }, 600_000);
});
