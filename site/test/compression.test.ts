import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, ROOT } from './cli.js';

/**
 * The Compression study page from a real study: digits_cnn quantized with pbh quantize (ONNX Runtime's static QDQ),
 * measured beside its dense fp32 model on onnxruntime and OpenVINO at batch 8, the site built from that database.
 */

const SUITE = path.join(ROOT, '.cache', 'suite');
let tmp: string;
let out: string;
let rows: { model_name: string; engine_name: string; throughput_mean: number; precision_executed: string }[];

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pbh-compression-test-'));
  const q = await pbh(['quantize', path.join(SUITE, 'models', 'digits_cnn.onnx'), '--out', tmp, '--method', 'static', '--calibration', path.join(SUITE, 'data', 'digits_calibration_x.npy')]);
  if (q.code !== 0) throw new Error(`pbh quantize failed (${q.code}): ${q.stderr}`);
  const config = path.join(tmp, 'study.json');
  await writeFile(config, JSON.stringify({
    name: 'compression-test', seed: 0,
    dataset: { kind: 'npy', name: 'digits-npy', limit: 64, inputs: { input: path.join(SUITE, 'data', 'digits_x.npy') }, labels: path.join(SUITE, 'data', 'digits_y.npy') },
    models: [
      { name: 'digits_cnn', path: path.join(SUITE, 'models', 'digits_cnn.onnx'), weights: 'trained' },
      { name: 'digits_cnn_static_int8', path: path.join(tmp, 'digits_cnn.static.int8.onnx'), weights: 'trained' },
    ],
    engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }, { name: 'openvino', options: { threads: 1 } }],
    batch_sizes: [8], warmup_batches: 1, sessions: 2, scorers: ['top1'],
    scenario: { kind: 'single_stream', min_query_count: 8, min_duration_ms: 50 },
  }));
  const db = path.join(tmp, 'study.duckdb');
  const run = await pbh(['run', config, '--db', db]);
  if (run.code !== 0) throw new Error(`pbh run failed (${run.code}): ${run.stderr}\n${run.stdout}`);
  const query = await pbh(['query', 'SELECT model_name, engine_name, throughput_mean, precision_executed FROM profiles', '--db', db, '--format', 'json']);
  rows = JSON.parse(query.stdout);
  out = path.join(tmp, 'site');
  const build = await pbh(['site', 'build', '--db', db, '--out', out]);
  if (build.code !== 0) throw new Error(`pbh site build failed (${build.code}): ${build.stderr}`);
}, 600_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('the Compression study page', () => {
  it('sets INT8 static against dense fp32 per engine: the ratio of the two Profiles, and the precision each engine executed', () => {
    const { document } = parseHTML(readFileSync(path.join(out, 'sparsity.html'), 'utf8'));
    expect(document.querySelector('h1')?.textContent).toBe('Compression study');
    const table = document.querySelector('table[data-table="compression"][data-batch="8"]')!;
    expect(table).not.toBeNull();
    const engines = [...table.querySelectorAll('thead th')].slice(2).map((th) => th.textContent);
    expect(engines).toEqual(['onnxruntime', 'openvino']);
    const row = (variant: string) => [...table.querySelectorAll('tbody tr')].find((tr) => tr.getAttribute('data-variant') === variant)!;
    expect(row('dense fp32')).toBeDefined();
    // The dense model against itself on every engine: 1.00×, never one engine entry's dense over another's.
    for (const cell of [...row('dense fp32').querySelectorAll('td')].slice(2)) expect(cell.textContent).toMatch(/^1\.00×/);
    expect(document.body.textContent).not.toContain('unknown method');
    const int8 = [...row('INT8 static').querySelectorAll('td')];
    expect(int8[0]!.textContent).toBe('digits_cnn');
    for (const [i, engine] of engines.entries()) {
      const of = (model: string) => rows.find((r) => r.model_name === model && r.engine_name === engine)!;
      const cell = int8[2 + i]!;
      expect(Number(cell.getAttribute('data-rel'))).toBeCloseTo(of('digits_cnn_static_int8').throughput_mean / of('digits_cnn').throughput_mean, 9);
      expect(cell.textContent).toContain(of('digits_cnn_static_int8').precision_executed);
      expect(of('digits_cnn_static_int8').precision_executed).toBe('int8');
    }
    const extremes = document.querySelector('[data-summary="extremes"]')?.textContent ?? '';
    for (const engine of engines) expect(extremes).toMatch(new RegExp(`${engine} best [\\d.]+× \\(INT8 static.*worst [\\d.]+×`));
  });

  it('states each Profile\'s % of peak against its executed precision\'s peak', () => {
    const { document } = parseHTML(readFileSync(path.join(out, 'index.html'), 'utf8'));
    const links = [...document.querySelectorAll('a[href*="profiles/"]')].map((a) => a.getAttribute('href')!);
    expect(links.length).toBeGreaterThan(0);
    const precisions = new Set<string>();
    for (const href of new Set(links)) {
      const page = readFileSync(path.join(out, href.replace(/^\.?\//, '')), 'utf8');
      const m = /of the theoretical (\w+) peak of/.exec(page);
      expect(m, href).not.toBeNull();
      precisions.add(m![1]!);
    }
    expect(precisions).toEqual(new Set(['fp32', 'int8']));
  });
});
