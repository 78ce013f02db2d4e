import { mkdirSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_ARGS, CHROMIUM, pbh, ROOT } from './cli.js';

/**
 * Every chart on every page of a real site, laid out by Chromium: no mark (dot, bar) outside its plot area (the
 * rectangle Plot's x and y scales span, data-plot on each SVG), no text outside the SVG, no two texts overlapping
 * (direct labels, tick labels, axis labels), and every chart text at 4.5:1 or more against the white ground. The
 * runs span more than ten times in throughput and latency (untuned TVM beside OpenVINO and ONNX Runtime, batch 1 and
 * 16), so log axes, end labels of neighbouring lines and bars of very different lengths are all drawn.
 */

const SUITE = path.join(ROOT, '.cache', 'suite');
const SHOTS = path.join(ROOT, 'site', 'test', 'screenshots');

let tmp: string;
let out: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pbh-chart-bounds-'));
  const db = path.join(tmp, 'bounds.duckdb');
  out = path.join(tmp, 'site');
  const digits = { kind: 'npy', name: 'digits-npy', inputs: { x: path.join(SUITE, 'data', 'digits_x.npy') }, labels: path.join(SUITE, 'data', 'digits_y.npy'), limit: 64 };
  const config = {
    name: 'chart-bounds', seed: 0, dataset: digits,
    models: [
      { name: 'digits_cnn', path: path.join(SUITE, 'models', 'digits_cnn.onnx'), weights: 'trained' },
      { name: 'digits_cnn_sparse80', path: path.join(SUITE, 'models', 'digits_cnn_sparse80.onnx'), weights: 'trained' },
    ],
    engines: [
      { name: 'onnxruntime', options: { intraOpNumThreads: 2 } },
      { name: 'openvino', options: { hint: 'latency' } },
      { name: 'openvino', label: 'openvino-throughput', options: { hint: 'throughput' } },
      { name: 'tvm', label: 'tvm-untuned' },
    ],
    exclude: [{ model: 'digits_cnn_sparse80', engine: 'tvm-untuned', reason: 'the test keeps TVM to one model' }],
    batch_sizes: [1, 16], warmup_batches: 1, sessions: 3, scorers: ['top1'],
  };
  const file = path.join(tmp, 'bounds.json');
  await writeFile(file, JSON.stringify(config));
  // Twice, so History draws a line of two runs per cell.
  for (let i = 0; i < 2; i++) {
    const run = await pbh(['run', file, '--db', db], 400_000);
    if (run.code !== 0 && run.code !== 1) throw new Error(`pbh run failed (${run.code}): ${run.stderr}\n${run.stdout}`);
  }
  const build = await pbh(['site', 'build', '--db', db, '--out', out], 300_000, { PBH_SITE_PAGE_CACHE: 'off' });
  if (build.code !== 0) throw new Error(`pbh site build failed (${build.code}): ${build.stderr}`);
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

interface Problem {
  chart: string;
  what: string;
}

/** What is wrong with the charts of the open page, as the browser laid them out (empty: nothing). */
function chartProblems(): Promise<{ charts: number; marks: number; texts: number; problems: Problem[] }> {
  return page.evaluate(() => {
    const problems: { chart: string; what: string }[] = [];
    let marks = 0;
    let texts = 0;
    const luminance = (rgb: number[]): number => {
      const [r, g, b] = rgb.map((c) => {
        const v = c / 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      }) as [number, number, number];
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    // The sparsity and compression study's charts (sp-*, study-*: lib/sparsity-charts.ts) are another issue's work (34) and left out here.
    const charts = [...document.querySelectorAll<HTMLElement>('[data-chart]')].filter((n) => !/^(sp|study)-/.test(n.dataset.chart ?? ''));
    for (const node of charts) {
      const id = node.dataset.chart ?? '?';
      const svg = (node.tagName.toLowerCase() === 'svg' ? node : node.querySelector(':scope > svg')) as SVGSVGElement | null;
      if (!svg) continue;
      const box = svg.getBoundingClientRect();
      const view = svg.viewBox.baseVal;
      const width = view && view.width > 0 ? view.width : box.width;
      const height = view && view.height > 0 ? view.height : box.height;
      const sx = width / box.width;
      const sy = height / box.height;
      // An element's box in the SVG's own units (what data-plot is in).
      const local = (el: Element): { l: number; t: number; r: number; b: number } => {
        const r = el.getBoundingClientRect();
        return { l: (r.left - box.left) * sx, t: (r.top - box.top) * sy, r: (r.right - box.left) * sx, b: (r.bottom - box.top) * sy };
      };
      const [pl, pt, pr, pb] = (svg.getAttribute('data-plot') ?? `0,0,${width},${height}`).split(',').map(Number) as [number, number, number, number];
      const tolerance = 1.5;
      // Dots: their centre inside the plot. Bars: the whole bar.
      for (const dot of svg.querySelectorAll('g[aria-label="dot"]:not(.annotation) :is(circle, path, use)')) {
        marks++;
        const b = local(dot);
        const [cx, cy] = [(b.l + b.r) / 2, (b.t + b.b) / 2];
        if (cx < pl - tolerance || cx > pr + tolerance || cy < pt - tolerance || cy > pb + tolerance) {
          problems.push({ chart: id, what: `a dot at (${cx.toFixed(1)}, ${cy.toFixed(1)}) is outside the plot [${pl}, ${pt}, ${pr}, ${pb}] (${dot.closest('g[aria-label="dot"]')?.querySelector('title')?.textContent ?? dot.querySelector('title')?.textContent ?? ''})` });
        }
      }
      for (const bar of svg.querySelectorAll('g[aria-label="bar"] rect')) {
        marks++;
        const b = local(bar);
        if (b.l < pl - tolerance || b.r > pr + tolerance || b.t < pt - tolerance || b.b > pb + tolerance) {
          problems.push({ chart: id, what: `a bar [${b.l.toFixed(1)}, ${b.t.toFixed(1)}, ${b.r.toFixed(1)}, ${b.b.toFixed(1)}] leaves the plot [${pl}, ${pt}, ${pr}, ${pb}]` });
        }
      }
      // Every text the SVG draws: inside the SVG, legible against white, and clear of every other.
      const shown = [...svg.querySelectorAll('text')].filter((t) => (t.textContent ?? '').trim() !== '' && t.getBoundingClientRect().width > 0);
      const boxes = shown.map((t) => ({ text: (t.textContent ?? '').trim(), ...local(t) }));
      texts += shown.length;
      shown.forEach((t, i) => {
        const b = boxes[i]!;
        if (b.l < -tolerance || b.t < -tolerance || b.r > width + tolerance || b.b > height + tolerance) {
          problems.push({ chart: id, what: `text "${b.text}" [${b.l.toFixed(1)}, ${b.t.toFixed(1)}, ${b.r.toFixed(1)}, ${b.b.toFixed(1)}] is cut by the SVG's edge (${width} × ${height})` });
        }
        const fill = getComputedStyle(t).fill;
        const rgb = /rgb\((\d+), (\d+), (\d+)/.exec(fill)?.slice(1).map(Number);
        if (rgb) {
          const ratio = 1.05 / (luminance(rgb) + 0.05);
          if (ratio < 4.5) problems.push({ chart: id, what: `text "${b.text}" in ${fill} is ${ratio.toFixed(2)}:1 against white, under 4.5:1` });
        }
      });
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, c] = [boxes[i]!, boxes[j]!];
          // Overlap by more than a pixel each way: touching boxes are fine.
          const x = Math.min(a.r, c.r) - Math.max(a.l, c.l);
          const y = Math.min(a.b, c.b) - Math.max(a.t, c.t);
          if (x > 1 && y > 1) problems.push({ chart: id, what: `texts "${a.text}" and "${c.text}" overlap (${x.toFixed(1)} × ${y.toFixed(1)} px)` });
        }
      }
    }
    return { charts: charts.length, marks, texts, problems };
  });
}

/** Pages of the site that draw charts: every model, engine and History page, Comparisons, and the Profile pages. */
function chartPages(): string[] {
  const list = (folder: string): string[] => readdirSync(path.join(out, folder)).filter((f) => f.endsWith('.html')).map((f) => `${folder}/${f}`);
  return ['comparisons.html', ...list('models'), ...list('engines'), ...list('history'), ...list('profiles')];
}

describe('charts show every mark', () => {
  it('keeps every dot and bar inside its plot, every text inside its chart, legible and clear of every other', async () => {
    const problems: string[] = [];
    let charts = 0;
    let marks = 0;
    let texts = 0;
    for (const relative of chartPages()) {
      await page.goto(pathToFileURL(path.join(out, relative)).href);
      const found = await chartProblems();
      charts += found.charts;
      marks += found.marks;
      texts += found.texts;
      for (const p of found.problems) problems.push(`${relative} ${p.chart}: ${p.what}`);
      if (found.problems.length > 0) await page.screenshot({ path: path.join(SHOTS, `bounds-${relative.replace(/\W/g, '_')}.png`), fullPage: true });
    }
    // Enough was drawn to mean something: model, engine, History and Profile charts, with their marks and labels.
    expect(charts).toBeGreaterThan(10);
    expect(marks).toBeGreaterThan(50);
    expect(texts).toBeGreaterThan(200);
    expect(problems, problems.slice(0, 20).join('\n')).toEqual([]);
  });

  it('uses a log scale where throughput spans more than ten times, and no SI prefix on a tick', async () => {
    await page.goto(pathToFileURL(path.join(out, 'engines', 'tvm.html')).href);
    const ticks = await page.locator('[data-chart] svg g[aria-label="x-axis tick label"] text, svg[data-chart] g[aria-label="x-axis tick label"] text').allTextContents();
    expect(ticks.length).toBeGreaterThan(1);
    for (const tick of ticks) expect(tick).toMatch(/^[\d,.]+$/);
    await page.goto(pathToFileURL(path.join(out, 'models', 'digits_cnn.html')).href);
    const labels = await page.locator('[data-chart] g[aria-label="y-axis label"], [data-chart] g[aria-label="x-axis label"]').allTextContents();
    expect(labels.some((l) => /log scale/.test(l))).toBe(true);
    // A latency axis names its unit, µs, ms or s, and its ticks are plain numbers in it.
    expect(labels.some((l) => /latency per batch \((µs|ms|s),/.test(l))).toBe(true);
    const yTicks = await page.locator('[data-chart] g[aria-label="y-axis tick label"] text').allTextContents();
    for (const tick of yTicks) expect(tick).toMatch(/^[\d,.%]*$/);
  });
});
