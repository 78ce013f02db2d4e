import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const PBH = path.join(ROOT, 'packages', 'core', 'dist', 'cli', 'main.js');
const LM = path.join(ROOT, '.cache', 'lm');
const PROMPTS = 5;
const MAX_NEW = 10;

function pbh(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PBH, ...args], { cwd: ROOT, env: { ...process.env, FORCE_COLOR: '0' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('the site shows a generate Profile', () => {
  it('draws the TTFT and ITL distributions on its page and lists it among the generative models', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pbh-site-gen-'));
    const db = path.join(dir, 'gen.duckdb');
    const config = path.join(dir, 'gen.yaml');
    await writeFile(
      config,
      stringify({
        name: 'site-generate',
        dataset: { kind: 'text', prompts: path.join(LM, 'data', 'prompts.jsonl'), held_out: path.join(LM, 'data', 'held_out.txt'), limit: PROMPTS },
        models: [{ name: 'byte_lm', path: path.join(LM, 'models', 'byte_lm.onnx'), weights: 'trained' }],
        generate: { max_new_tokens: MAX_NEW, slo: { ttft_ms: 1000 } },
        engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }, { name: 'onnxruntime', label: 'ort-server', options: { intraOpNumThreads: 1 }, scenario: { kind: 'server', target_qps: 30 } }],
        batch_sizes: [1],
        warmup_batches: 1,
        sessions: 2,
      }),
    );
    const run = await pbh(['run', config, '--db', db]);
    expect(run.code, run.out).toBe(0);
    const out = path.join(dir, 'site');
    const built = await pbh(['site', 'build', '--db', db, '--out', out]);
    expect(built.code, built.out).toBe(0);
    const pages = readdirSync(path.join(out, 'profiles')).filter((f) => f.endsWith('.html'));
    const serverPage = pages.find((f) => readFileSync(path.join(out, 'profiles', f), 'utf8').includes('<h1>byte_lm · ort-server (onnxruntime)'));
    expect(serverPage).toBeDefined();
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking'] });
    try {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(path.join(out, 'profiles', serverPage!)).href);
      const section = page.locator('#generation');
      await expect(section.locator('h2').textContent()).resolves.toBe('Generation');
      // One histogram entry per request of session 1 for TTFT, one per gap for ITL.
      await expect(section.locator('[data-chart="gen-ttft"]').getAttribute('data-rows')).resolves.toBe(String(PROMPTS));
      await expect(section.locator('[data-chart="gen-itl"]').getAttribute('data-rows')).resolves.toBe(String(PROMPTS * (MAX_NEW - 1)));
      expect(await section.locator('[data-chart="gen-ttft"] rect').count()).toBeGreaterThan(0);
      const text = (await section.textContent()) ?? '';
      expect(text).toMatch(/server: Poisson arrivals at 30 requests\/s, at most 4 in flight/);
      const nll = /perplexity on 4,064 held-out tokens: ([\d.]+) nats\/token \(uniform: 5\.55\)/.exec(text);
      const generated = JSON.parse(readFileSync(path.join(LM, 'lm.json'), 'utf8')) as { held_out_nll: number };
      expect(Number(nll?.[1])).toBeCloseTo(generated.held_out_nll, 2);
      expect(text).toMatch(/output tokens\/s/);
      await page.goto(pathToFileURL(path.join(out, 'index.html')).href);
      const rows = page.locator('#generative tbody tr');
      await expect(rows.count()).resolves.toBe(2);
      await expect(rows.locator('td:nth-child(2)').allTextContents()).resolves.toEqual(expect.arrayContaining(['onnxruntime', 'ort-server']));
    } finally {
      await browser.close();
    }
  }, 240_000);
});
