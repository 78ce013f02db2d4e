import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { findVenvPython } from '../../packages/core/src/worker/venv.js';
import { paretoFront } from '../src/lib/pareto.js';
import { BROWSER_ARGS, CHROMIUM, collect, pbh, ROOT } from './cli.js';

/**
 * The model page's serving charts from real Profiles: a sweep against the loopback echo server (engine openai: an
 * endpoint) beside ONNX Runtime in PBH's worker on the same Llama folder, one at a time and at two Poisson rates.
 */

const LLMS = path.join(ROOT, '.cache', 'llms');
const PROMPTS = 6;
const MAX_NEW = 6;
const servers: ChildProcess[] = [];

afterAll(() => {
  for (const s of servers) s.kill();
});

/** The echo server, streaming a chunk a millisecond (so TPOT is a millisecond or so); its base URL once it listens. */
function startEcho(python: string): Promise<string> {
  const child = spawn(python, [path.join(ROOT, 'scripts', 'openai_echo_server.py'), '--port', '0', '--itl-ms', '1'], { cwd: ROOT });
  servers.push(child);
  return new Promise((resolve, reject) => {
    let said = '';
    child.stdout.on('data', (d: Buffer) => {
      said += d.toString();
      const url = /listening on (\S+)\n/.exec(said)?.[1];
      if (url) resolve(url);
    });
    child.on('exit', (code) => reject(new Error(`the echo server exited ${code}: ${said}`)));
  });
}

describe('the model page draws serving sweeps', () => {
  it('plots output tokens/s against tokens/s per user with the Pareto front, and TTFT against load, endpoint beside in-process', async () => {
    const python = findVenvPython()!.python;
    // A no-op when .cache/llms is current.
    const built = await collect(python, [path.join(ROOT, 'python', 'generate_llms.py')], ROOT, {}, 600_000);
    expect(built.code, built.stderr).toBe(0);
    const echo = await startEcho(python);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pbh-site-serving-'));
    const db = path.join(dir, 'serving.duckdb');
    const config = path.join(dir, 'serving.yaml');
    const endpoint = { base_url: echo, late_ms: 1000 };
    const ort = { intraOpNumThreads: 1 };
    await writeFile(
      config,
      stringify({
        name: 'site-serving',
        dataset: { kind: 'text', prompts: path.join(LLMS, 'data', 'prompts.jsonl'), limit: PROMPTS },
        models: [{ name: 'llama_gqa', path: path.join(LLMS, 'llama_gqa', 'hf') }],
        generate: { max_new_tokens: MAX_NEW, max_concurrency: 4, gate_prompts: 0, perplexity: false },
        engines: [
          { name: 'onnxruntime', options: ort },
          { name: 'onnxruntime', label: 'ort-r20', options: ort, scenario: { kind: 'server', target_qps: 20 } },
          { name: 'openai', label: 'echo-one', options: endpoint },
          { name: 'openai', label: 'echo-r50', options: endpoint, scenario: { kind: 'server', target_qps: 50 } },
          { name: 'openai', label: 'echo-c2', options: endpoint, scenario: { kind: 'server', target_qps: 1e6, max_concurrency: 2 } },
          // A limit no client meets: an INVALID point, drawn hollow.
          { name: 'openai', label: 'echo-strict', options: { ...endpoint, late_ms: 1e-6 }, scenario: { kind: 'server', target_qps: 50 } },
        ],
        batch_sizes: [1],
        warmup_batches: 1,
        sessions: 1,
      }),
    );
    const run = await pbh(['run', config, '--db', db], 600_000);
    expect(run.code, run.stderr).toBe(0);
    const out = path.join(dir, 'site');
    const site = await pbh(['site', 'build', '--db', db, '--out', out]);
    expect(site.code, site.stderr).toBe(0);
    const modelPage = readdirSync(path.join(out, 'models')).find((f) => f.endsWith('.html') && readFileSync(path.join(out, 'models', f), 'utf8').includes('<h1>Model: llama_gqa'));
    expect(modelPage).toBeDefined();

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(path.join(out, 'models', modelPage!)).href);
      const section = page.locator('#serving');
      const tokens = section.locator('[data-chart="serve-tokens-0"]');
      // One dot per Profile (the front's rings are annotations), the INVALID one among them.
      await expect(tokens.getAttribute('data-rows')).resolves.toBe('6');
      await expect(tokens.locator('g[aria-label="dot"]:not(.annotation) :is(circle, path)').count()).resolves.toBe(6);
      await expect(section.locator('[data-chart="serve-ttft-0"] g[aria-label="dot"]:not(.annotation) :is(circle, path)').count()).resolves.toBe(6);

      // The tokens chart's data table: the two sweeps, each point labelled by who served it.
      const table = tokens.locator('xpath=ancestor::figure').locator('table');
      const head = await table.locator('thead th').allTextContents();
      const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
      const col = (name: string): number => head.indexOf(name);
      const cell = (row: string[], name: string): string => row[col(name)]!;
      expect(rows).toHaveLength(6);
      const entry = (name: string): string[] => rows.find((r) => cell(r, 'Engine entry') === name)!;
      for (const r of rows) expect(cell(r, 'Served by')).toBe(cell(r, 'Engine entry').startsWith('echo') ? 'endpoint' : 'in-process');
      // A sweep is the entries that differ only in their load; the strict entry's options differ, so it is a series of its own.
      expect(cell(entry('onnxruntime'), 'Series')).toBe('onnxruntime');
      expect(cell(entry('ort-r20'), 'Series')).toBe('onnxruntime');
      expect(new Set(['echo-one', 'echo-r50', 'echo-c2'].map((e) => cell(entry(e), 'Series'))).size).toBe(1);
      expect(cell(entry('echo-one'), 'Series')).toMatch(/^endpoint echo #\d$/);
      expect(cell(entry('echo-strict'), 'Series')).not.toBe(cell(entry('echo-one'), 'Series'));
      expect(rows.filter((r) => cell(r, 'Verdict') === 'INVALID').map((r) => cell(r, 'Engine entry'))).toEqual(['echo-strict']);
      expect(cell(entry('echo-c2'), 'Offered')).toBe('2 in flight at once');
      expect(cell(entry('echo-r50'), 'Offered')).toBe('Poisson 50 req/s, ≤ 4 in flight');
      expect(cell(entry('onnxruntime'), 'Offered')).toBe('one at a time');

      // The front the page marks is the one the table's own numbers give.
      const num = (text: string): number => Number(text.replace(/,/g, ''));
      const marked = rows.filter((r) => cell(r, 'On the front') === 'yes').map((r) => cell(r, 'Engine entry'));
      // The front is over the points not INVALID.
      const valid = rows.filter((r) => cell(r, 'Verdict') !== 'INVALID');
      const computed = paretoFront(valid, (r) => num(cell(r, 'Tokens/s per user')), (r) => num(cell(r, 'Output tokens/s'))).map((r) => cell(r, 'Engine entry'));
      expect(marked.length).toBeGreaterThan(0);
      expect(new Set(marked)).toEqual(new Set(computed));
      // The TTFT chart's table is the same points with the same front.
      const ttftTable = section.locator('[data-chart="serve-ttft-0"]').locator('xpath=ancestor::figure').locator('table tbody tr');
      await expect(ttftTable.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')))).resolves.toEqual(rows);
      // Per user is 1000 / TPOT p50, as the column heads say.
      for (const r of rows) expect(Math.abs(num(cell(r, 'Tokens/s per user')) * num(cell(r, 'TPOT p50 ms')) / 1000 - 1)).toBeLessThan(0.02);
      // The generative table on the home page says which entries are endpoints.
      await page.goto(pathToFileURL(path.join(out, 'index.html')).href);
      const engines = await page.locator('#generative tbody td:nth-child(2)').allTextContents();
      expect(engines.filter((t) => t.endsWith(' · endpoint')).map((t) => t.replace(' · endpoint', '')).sort()).toEqual(['echo-c2', 'echo-one', 'echo-r50', 'echo-strict']);
      expect(engines.filter((t) => !t.endsWith(' · endpoint')).sort()).toEqual(['onnxruntime', 'ort-r20']);
    } finally {
      await browser.close();
    }
  }, 900_000);
});
