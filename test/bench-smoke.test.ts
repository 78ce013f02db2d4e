import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** Each bench at its smallest size, and a line of its output that says it got to the end. */
const SMALLEST: Record<string, { env: Record<string, string>; done: RegExp }> = {
  'bench:overhead': { env: { ROUNDS: '1', QUERIES: '200', CASES: 'mlp' }, done: /target: the ranked figure/ },
  'bench:native': { env: { ROUNDS: '1', BUDGET_S: '0.01', CASES: 'mlp' }, done: /The engine tolerance is 5 µs/ },
  'bench:loadgen': { env: { ROUNDS: '1', DURATION_MS: '200' }, done: /single_stream|server/ },
  'bench:pytorch': { env: { ROUNDS: '1', BUDGET_S: '0.01', CASES: 'mlp 32-64-10 b1' }, done: /target: the ranked figure within 3% or 2 µs/ },
  'bench:site': { env: { PROFILES: '200' }, done: /Profiles/ },
  'bench:queue': { env: { QUEUE_SCALE: '0.01' }, done: /Wq measured/ },
  'bench:quantize': { env: { MODEL: 'digits_cnn', ROUNDS: '1', SECONDS: '0.2' }, done: /target: the ranked INT8 figure within 3%/ },
  'bench:litert': { env: { PROCESSES: '1', ROUNDS: '1', BUDGET_S: '0.01', CASES: 'litert digits_cnn fp32' }, done: /target: LiteRT within 3% or 2 µs of the bare loop/ },
  'bench:llm': { env: { MODELS: 'llama_gqa', ENGINES: 'onnxruntime,openvino,openvino-onnx,onnxruntime-genai,openvino-genai', ROUNDS: '1', PROMPTS: '2', MAX_NEW: '4' }, done: /ratio = PBH \/ bare/ },
  'bench:serve': { env: { ROUNDS: '1', FLOOR_REQUESTS: '100', PROMPTS: '4', MAX_NEW: '4', STEADY_IN_FLIGHT: '8', STEADY_S: '0.5' }, done: /target within 5%; AIPerf/ },
  'bench:repeat': { env: { CONFIGS: 'configs/tabular.yaml', ENGINES: 'onnxruntime', BATCHES: '1', OUT: 'results/bench-repeat-smoke.json' }, done: /target: rerun\/first within ±10%/ },
  'bench:energy': { env: { ROUNDS: '1', SESSIONS: '1', SESSION_MS: '50', CASES: 'worker' }, done: /target: energy collection changes the headline/ },
};

describe('every bench script in package.json runs, at its smallest size', () => {
  it('names each bench:* script here', () => {
    expect(Object.keys(scripts).filter((s) => s.startsWith('bench:')).sort()).toEqual(Object.keys(SMALLEST).sort());
  });

  for (const [name, { env, done }] of Object.entries(SMALLEST)) {
    it(`npm run ${name}`, async () => {
      const r = await execa('npm', ['run', '--silent', name], { cwd: ROOT, env: { ...env, CI: '' }, reject: false, all: true, timeout: 600_000 });
      expect(r.exitCode, `${name} exited ${r.exitCode}:\n${r.all?.slice(-4000)}`).toBe(0);
      expect(r.all).toMatch(done);
    }, 600_000);
  }
});
