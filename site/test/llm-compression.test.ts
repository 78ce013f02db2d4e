import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, ROOT } from './cli.js';

/**
 * The Compression study page for a language model: the tiny Llama's Optimum decoder with its weights compressed by
 * pbh quantize (int4 MatMulNBits, NNCF int8), generated beside its fp32 model on onnxruntime and OpenVINO, the site
 * built from that database: tokens/s relative to fp32 on the same engine and the cost in bits per byte.
 */

const LLMS = path.join(ROOT, '.cache', 'llms');
let tmp: string;
let out: string;
let rows: { model_name: string; engine_name: string; throughput_mean: number; bpb: number }[];

beforeAll(async () => {
  // A no-op when .cache/llms is current (npm test's setup builds it).
  execFileSync(path.join(ROOT, '.venv', 'bin', 'python'), [path.join(ROOT, 'python', 'generate_llms.py')], { cwd: ROOT, stdio: 'ignore' });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pbh-llm-compression-test-'));
  const source = path.join(LLMS, 'llama_gqa', 'onnx', 'model.onnx');
  const q = await pbh(['quantize', source, '--out', tmp, '--method', 'int4,nncf-int8', '--name', 'llama']);
  if (q.code !== 0) throw new Error(`pbh quantize failed (${q.code}): ${q.stderr}`);
  const config = path.join(tmp, 'study.json');
  await writeFile(config, JSON.stringify({
    name: 'llm-compression-test', seed: 0,
    dataset: { kind: 'text', name: 'llm-held-out', prompts: path.join(LLMS, 'data', 'prompts.jsonl'), held_out: path.join(LLMS, 'data', 'held_out.txt'), limit: 3 },
    models: [
      { name: 'llama', path: source },
      { name: 'llama_int4_int4', path: path.join(tmp, 'llama.int4.int4.onnx') },
      { name: 'llama_nncf-int8_int8', path: path.join(tmp, 'llama.nncf-int8.int8.onnx') },
    ],
    generate: { max_new_tokens: 8, gate_prompts: 1 },
    engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }, { name: 'openvino', options: { threads: 1 } }],
    batch_sizes: [1], warmup_batches: 1, sessions: 1, rounds: { max_sessions: 1 },
  }));
  const db = path.join(tmp, 'study.duckdb');
  const run = await pbh(['run', config, '--db', db], 600_000);
  if (run.code !== 0) throw new Error(`pbh run failed (${run.code}): ${run.stderr}\n${run.stdout}`);
  const query = await pbh(['query', "SELECT model_name, engine_name, throughput_mean, TRY_CAST(json_extract_string(profile_json, '$.generation.perplexity.bits_per_byte') AS DOUBLE) AS bpb FROM profiles", '--db', db, '--format', 'json']);
  rows = JSON.parse(query.stdout);
  out = path.join(tmp, 'site');
  const build = await pbh(['site', 'build', '--db', db, '--out', out]);
  if (build.code !== 0) throw new Error(`pbh site build failed (${build.code}): ${build.stderr}`);
}, 900_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('the Compression study page for a language model', () => {
  it('sets int4 and int8 weights against fp32 per engine: tokens/s relative to it and the cost in bits per byte', () => {
    const { document } = parseHTML(readFileSync(path.join(out, 'sparsity.html'), 'utf8'));
    const table = document.querySelector('table[data-table="compression"][data-batch="1"]')!;
    expect(table).not.toBeNull();
    const engines = [...table.querySelectorAll('thead th')].slice(2).map((th) => th.textContent);
    expect(engines).toEqual(['onnxruntime', 'openvino']);
    const row = (variant: string) => [...table.querySelectorAll('tbody tr')].find((tr) => tr.getAttribute('data-variant') === variant);
    for (const [variant, model] of [['int4 weights (MatMulNBits)', 'llama_int4_int4'], ['int8 weights (NNCF)', 'llama_nncf-int8_int8']] as const) {
      const cells = [...row(variant)!.querySelectorAll('td')];
      expect(cells[0]!.textContent).toBe('llama');
      for (const [i, engine] of engines.entries()) {
        const of = (name: string) => rows.find((r) => r.model_name === name && r.engine_name === engine)!;
        const cell = cells[2 + i]!;
        expect(Number(cell.getAttribute('data-rel'))).toBeCloseTo(of(model).throughput_mean / of('llama').throughput_mean, 9);
        const cost = of(model).bpb - of('llama').bpb;
        const shown = /([+−±])(\d\.\d{3}) bits\/byte/.exec(cell.textContent ?? '');
        expect(shown, cell.textContent ?? '').not.toBeNull();
        expect(Number(shown![2]) * (shown![1] === '−' ? -1 : 1)).toBeCloseTo(Math.abs(cost) < 0.0005 ? 0 : cost, 3);
        expect(cell.getAttribute('title')).toMatch(/output tokens\/s/);
      }
    }
  });
});
