import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { suiteData, suiteModel } from './suite.js';

interface Interference {
  other_cpu_share: number;
  busy: boolean;
  sessions: { other_cpu_share: number }[];
}

/** One real cell (ONNX Runtime in its worker, two threads), sessions long enough for /proc/stat's 10 ms ticks. */
async function measure(dir: string, name: string): Promise<Interference> {
  const db = path.join(dir, `${name}.duckdb`);
  const config = await writeConfig(dir, `${name}.yaml`, {
    name: `interference-${name}`,
    dataset: { kind: 'npy', inputs: { input: suiteData('digits_x.npy') }, labels: suiteData('digits_y.npy'), limit: 128 },
    models: [{ name: 'digits_cnn', path: suiteModel('digits_cnn'), weights: 'trained' }],
    engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 2 } }],
    batch_sizes: [8],
    sessions: 3,
    // Three sessions whatever their spread: beside a burner the interval rule would add rounds.
    rounds: { max_sessions: 3 },
    scenario: { kind: 'single_stream', min_duration_ms: 700 },
    scorers: ['top1'],
  });
  const r = await pbh(['run', config, '--db', db]);
  expect(r.code, r.stderr).toBe(0);
  const [row] = await queryJson<{ interference: string }>(db, "SELECT json_extract(profile_json, '$.interference')::VARCHAR AS interference FROM profiles");
  return JSON.parse(row!.interference) as Interference;
}

describe('interference: a Profile measured beside other work says so', () => {
  it('is not busy alone, and busy beside a process that spins one core', async () => {
    const dir = await tempDir('pbh-interference-');
    const alone = await measure(dir, 'alone');
    let burner: ChildProcess | undefined;
    try {
      burner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
      const beside = await measure(dir, 'burner');
      console.log(`other processes' CPU share: alone ${(alone.other_cpu_share * 100).toFixed(1)}% (sessions ${alone.sessions.map((s) => (s.other_cpu_share * 100).toFixed(0)).join(', ')}), beside a burner ${(beside.other_cpu_share * 100).toFixed(1)}% (sessions ${beside.sessions.map((s) => (s.other_cpu_share * 100).toFixed(0)).join(', ')})`);
      expect(alone.busy, `alone: ${JSON.stringify(alone)}`).toBe(false);
      expect(beside.busy, `beside a burner: ${JSON.stringify(beside)}`).toBe(true);
      expect(beside.sessions).toHaveLength(3);
      expect(beside.other_cpu_share).toBeGreaterThan(alone.other_cpu_share);
    } finally {
      burner?.kill('SIGKILL');
    }
  }, 300_000);
});
