import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { StoredProfileSchema, type StoredProfile } from '@pbh/core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fmtPct } from '../src/lib/format.js';
import { CHANGE_P } from '../src/lib/history.js';
import { meterValue } from '../src/lib/profile-view.js';
import { detectableChange } from '../src/lib/welch.js';
import { BROWSER_ARGS, CHROMIUM, pbh, readJsonGz, ROOT } from './cli.js';

/**
 * The charts and the Sparsity study page, from a real study: pbh prune makes OBC and magnitude variants of the digits
 * CNN (50% unstructured and 2:4, both at 50%: the case that must never be joined into one line), pbh run measures them
 * with the dense model on onnxruntime and OpenVINO at batch 1 and 8, and a second run makes one cell fail (its model
 * file is not ONNX) and re-measures another, so History has a status change and a two-point comparison.
 */

const SUITE = path.join(ROOT, '.cache', 'suite');
const SHOTS = path.join(ROOT, 'site', 'test', 'screenshots');
const ONNXRUNTIME_COLOR = '#4269d0';


let tmp: string;
let out: string;
let browser: Browser;
let page: Page;
let profiles: StoredProfile[];

const VARIANTS = ['digits_cnn_obc_sparse50', 'digits_cnn_obc_2of4', 'digits_cnn_magnitude_sparse50', 'digits_cnn_magnitude_2of4'];

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pbh-charts-test-'));
  const db = path.join(tmp, 'study.duckdb');
  out = path.join(tmp, 'site');
  const pruned = path.join(tmp, 'pruned');
  const prune = await pbh([
    'prune', path.join(SUITE, 'models', 'digits_cnn.onnx'), '--out', pruned, '--method', 'obc,magnitude', '--unstructured', '0.5', '--nm', '2:4',
    '--calibration', path.join(SUITE, 'data', 'digits_calibration_x.npy'),
  ]);
  if (prune.code !== 0) throw new Error(`pbh prune failed (${prune.code}): ${prune.stderr}`);
  const file = (name: string): string => path.join(pruned, name.replace('digits_cnn_', 'digits_cnn.').replace(/_(sparse50|2of4)$/, '.$1') + '.onnx');
  const dataset = {
    kind: 'npy', name: 'digits-npy', limit: 64,
    inputs: { x: path.join(SUITE, 'data', 'digits_x.npy') }, labels: path.join(SUITE, 'data', 'digits_y.npy'),
  };
  const study = {
    name: 'charts-study', seed: 0, dataset,
    models: [
      { name: 'digits_cnn', path: path.join(SUITE, 'models', 'digits_cnn.onnx'), weights: 'trained' },
      ...VARIANTS.map((name) => ({ name, path: file(name), weights: 'trained' })),
    ],
    engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 2 } }, { name: 'openvino' }],
    batch_sizes: [1, 8], warmup_batches: 1, sessions: 3, scorers: ['top1'],
  };
  const notOnnx = path.join(tmp, 'not-a-model.onnx');
  await writeFile(notOnnx, 'this is not an ONNX file\n');
  const again = {
    ...study, name: 'charts-again',
    models: [{ name: 'digits_cnn', path: notOnnx, weights: 'trained' }, { name: 'digits_cnn_obc_2of4', path: file('digits_cnn_obc_2of4'), weights: 'trained' }],
    engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 2 } }], batch_sizes: [1],
  };
  for (const [name, config] of [['study', study], ['again', again]] as const) {
    const configFile = path.join(tmp, `${name}.json`);
    await writeFile(configFile, JSON.stringify(config, null, 2));
    const run = await pbh(['run', configFile, '--db', db]);
    if (run.code !== 0 && run.code !== 1) throw new Error(`pbh run ${name} failed (${run.code}): ${run.stderr}\n${run.stdout}`);
  }
  const build = await pbh(['site', 'build', '--db', db, '--out', out]);
  if (build.code !== 0) throw new Error(`pbh site build failed (${build.code}): ${build.stderr}`);
  profiles = readdirSync(path.join(out, 'data', 'profiles'))
    .filter((f) => f.endsWith('.json.gz'))
    .map((f) => StoredProfileSchema.parse(JSON.parse(gunzipSync(readFileSync(path.join(out, 'data', 'profiles', f))).toString('utf8'))));
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
}, 420_000);

afterAll(async () => {
  await browser?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const open = async (relative: string): Promise<void> => {
  await page.goto(pathToFileURL(path.join(out, relative)).href);
};

interface ChartFacts {
  width: number;
  height: number;
  rows: number;
  marks: number;
  swatches: { text: string; fill: string | null }[];
  lines: string[];
  yLabel: string;
  title: string;
  desc: string;
}

/** What the browser laid out for one chart: size, the marks drawn (dots and bars), its legend swatches, its lines. */
function chartFacts(id: string): Promise<ChartFacts> {
  return page.locator(`[data-chart="${id}"]`).evaluate((node) => {
    const svg = (node.tagName.toLowerCase() === 'svg' ? node : node.querySelector(':scope > svg')) as SVGSVGElement;
    const box = svg.getBoundingClientRect();
    // Facets wrap a mark's shapes in one group per panel: count the shapes, leaving out annotations (History's rings).
    const marks = svg.querySelectorAll('g[aria-label="dot"]:not(.annotation) :is(circle, path, use), g[aria-label="bar"] rect').length;
    const swatches = [...node.querySelectorAll('[class$="-swatch"]')].map((s) => ({
      text: s.textContent ?? '',
      fill: s.querySelector('svg')?.getAttribute('fill') ?? s.querySelector('svg')?.getAttribute('stroke') ?? null,
    }));
    return {
      width: box.width,
      height: box.height,
      rows: Number(node.getAttribute('data-rows')),
      marks,
      swatches,
      lines: [...svg.querySelectorAll('g[aria-label="line"] path')].map((p) => p.getAttribute('d') ?? ''),
      yLabel: svg.querySelector('g[aria-label="y-axis label"]')?.textContent ?? '',
      title: svg.querySelector(':scope > title')?.textContent ?? '',
      desc: svg.querySelector(':scope > desc')?.textContent ?? '',
    };
  });
}

/** A screenshot of the chart, saved, and the share of its pixels that are not white (a blank render is ~0). */
async function inkShare(id: string, name: string): Promise<number> {
  const chart = page.locator(`[data-chart="${id}"]`);
  const svg = (await chart.evaluate((n) => n.tagName.toLowerCase())) === 'svg' ? chart : chart.locator(':scope > svg');
  const png = await svg.screenshot({ path: path.join(SHOTS, `chart-${name}.png`) });
  return page.evaluate(async (data) => {
    const image = new Image();
    image.src = `data:image/png;base64,${data}`;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(image, 0, 0);
    const pixels = ctx.getImageData(0, 0, image.width, image.height).data;
    let ink = 0;
    for (let i = 0; i < pixels.length; i += 4) if (pixels[i]! < 235 || pixels[i + 1]! < 235 || pixels[i + 2]! < 235) ink += 1;
    return ink / (pixels.length / 4);
  }, png.toString('base64'));
}

/** Every chart kind: laid out at a real size, one mark per data row, not blank, with a title and description. */
async function expectDrawn(id: string, name: string, options: { marks?: boolean } = {}): Promise<ChartFacts> {
  const facts = await chartFacts(id);
  expect(facts.width, id).toBeGreaterThan(200);
  expect(facts.height, id).toBeGreaterThan(100);
  expect(facts.rows, id).toBeGreaterThan(0);
  if (options.marks !== false) expect(facts.marks, id).toBe(facts.rows);
  expect(facts.title.length, id).toBeGreaterThan(0);
  expect(facts.desc.length, id).toBeGreaterThan(20);
  expect(await inkShare(id, name), id).toBeGreaterThan(0.01);
  return facts;
}

const okProfiles = (): StoredProfile[] => profiles.filter((p) => p.status === 'ok');

describe('charts (Observable Plot, static SVG) and the Sparsity study page', () => {
  it('lists the study in the navigation and shows Table 1: target and measured sparsity, kind and method per model', async () => {
    await open('index.html');
    await page.getByRole('link', { name: 'Compression study' }).click();
    expect(page.url()).toMatch(/sparsity\.html$/);
    const rows = await page.locator('table[data-table="table1"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    expect(rows.map((r) => r[1])).toEqual(expect.arrayContaining(['digits_cnn', ...VARIANTS]));
    expect(rows).toHaveLength(VARIANTS.length + 1);
    for (const row of rows) {
      const model = okProfiles().find((p) => p.model?.name === row[1])?.model;
      expect(model, row[1]).toBeDefined();
      expect(row[0]).toBe('digits_cnn');
      expect(row[4]).toBe(fmtPct(model!.sparsity.target));
      expect(row[5]).toBe(fmtPct(model!.sparsity.actual, 2));
      expect(row[3]).toBe(model!.sparsity.kind === 'dense' ? 'dense' : model!.sparsity.method);
      expect(row[2]).toBe(model!.sparsity.kind === 'n_m' ? `${model!.sparsity.n}:${model!.sparsity.m}` : model!.sparsity.kind);
    }
    expect(await page.locator('[data-summary="speed"]').textContent()).toMatch(/onnxruntime.*×/);
    // The page's download carries the same study: every point's base model, pattern, method and ratio to dense.
    const download = readJsonGz(path.join(out, 'data', 'comparisons-sparsity.json.gz')) as Record<string, unknown>[];
    expect(download).toHaveLength((VARIANTS.length + 1) * 2 * 2);
    expect(new Set(download.map((r) => r.base_model))).toEqual(new Set(['digits_cnn']));
    expect(download.filter((r) => r.pattern === 'dense').every((r) => r.relative_throughput === 1)).toBe(true);
    expect(new Set(download.map((r) => r.method))).toEqual(new Set(['dense', 'obc', 'magnitude']));
  });

  it('draws throughput vs sparsity per engine: engine colours in the legend, batch symbols, no line joining N:M to unstructured', async () => {
    await open('sparsity.html');
    const facts = await expectDrawn('study-t-0', 'sparsity-throughput');
    expect(facts.swatches.map((s) => s.text)).toEqual(expect.arrayContaining(['onnxruntime', 'openvino', 'batch 1', 'batch 8']));
    expect(facts.swatches.find((s) => s.text === 'onnxruntime')?.fill).toBe(ONNXRUNTIME_COLOR);
    // One line per (engine, batch, method) of the unstructured variants, each from the dense model to its 50% point:
    // two points. The 2:4 variants at the same 50% are points of their own, never on a line.
    expect(facts.lines).toHaveLength(2 * 2 * 2);
    // A segment is L, or H/V where two points share a y or an x (equal throughputs draw a level line).
    for (const d of facts.lines) expect(d.match(/[LHV]/g) ?? [], d).toHaveLength(1);
    // Log once the plotted throughputs (the study's own points, as its download lists them) spread over 10x.
    const plotted = (readJsonGz(path.join(out, 'data', 'comparisons-sparsity.json.gz')) as { throughput_sps: number }[]).map((r) => r.throughput_sps);
    expect(plotted).toHaveLength(facts.rows);
    expect(facts.yLabel.includes('log scale')).toBe(Math.max(...plotted) / Math.min(...plotted) > 10);
    // The numbers are under the chart, open.
    const table = page.locator('[data-chart="study-t-0"] ~ details');
    expect(await table.getAttribute('open')).not.toBeNull();
    expect(await table.locator('tbody tr').count()).toBe(facts.rows);
  });

  it('draws the relative-to-dense panel (the dense model at exactly 1×) and accuracy per kind and method', async () => {
    await open('sparsity.html');
    const relative = await expectDrawn('study-r-0', 'sparsity-relative');
    // Every current cell (5 models x 2 engines x 2 batch sizes) has its dense model on the same engine and batch.
    expect(relative.rows).toBe((VARIANTS.length + 1) * 2 * 2);
    const cells = await page.locator('[data-chart="study-r-0"] ~ details tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
    expect(cells.filter((c) => c[2] === 'dense').every((c) => c[7] === '1.000×')).toBe(true);
    const accuracy = await expectDrawn('study-a-0', 'sparsity-accuracy');
    expect(accuracy.swatches.map((s) => s.text)).toEqual(expect.arrayContaining(['obc', 'magnitude', 'dense']));
    // Engines and batch sizes agreeing on a model's accuracy are one point: never more points than (model, accuracy) pairs.
    const distinct = new Set(okProfiles().map((p) => `${p.model?.name} ${p.scores.find((s) => s.metric === 'top1')?.value} ${p.workload.samples_scored}`));
    expect(accuracy.rows).toBe(distinct.size);
  });

  it('keeps one colour per engine across pages, and draws every comparison, model, engine and Profile chart', async () => {
    await open('comparisons.html');
    const latency = await expectDrawn('b-l-0', 'batch-latency');
    expect(latency.swatches.find((s) => s.text === 'onnxruntime')?.fill).toBe(ONNXRUNTIME_COLOR);
    await expectDrawn('b-t-0', 'tradeoff');
    const pareto = await expectDrawn('pareto-0', 'pareto');
    expect(pareto.swatches.map((s) => s.text)).toEqual(expect.arrayContaining(['onnxruntime', 'openvino']));
    await expectDrawn('sp-t-0', 'comparisons-sparsity');
    await open('engines/openvino.html');
    await expectDrawn('engine-throughput', 'engine-bars');
    const profile = okProfiles()[0]!;
    const slug = profile.profile_id.replace(/-/g, '').slice(0, 12);
    expect(existsSync(path.join(out, 'profiles', `${slug}.html`))).toBe(true);
    await open(`profiles/${slug}.html`);
    const ecdf = await expectDrawn('ecdf', 'ecdf', { marks: false });
    expect(ecdf.lines.length).toBeGreaterThan(0);
    expect(ecdf.swatches.some((s) => s.text.startsWith('engine'))).toBe(true);
    // Sessions, layers and FLOP/s are tables with a bar (<meter>) per row, laid out at a real width.
    const bars = (table: string) => page.locator(`table[data-table="${table}"] tbody meter`).evaluateAll((meters) =>
      meters.map((m) => ({ value: Number(m.getAttribute('value')), max: Number(m.getAttribute('max') ?? 1), width: m.getBoundingClientRect().width })),
    );
    // A bar holds its value to four significant digits (meterValue); the figure beside it is the reading.
    const sessions = await bars('sessions');
    const throughputs = profile.sessions.map((s) => s.throughput_sps);
    expect(sessions.map((b) => b.value)).toEqual(throughputs.map(meterValue));
    for (const bar of sessions) expect(bar.max).toBe(meterValue(Math.max(...throughputs)));
    const layers = await bars('layers');
    expect(layers.map((b) => b.value)).toEqual([...profile.layers].sort((a, b) => b.share - a.share).slice(0, 12).map((l) => meterValue(l.share)));
    for (const bar of [...sessions, ...layers]) expect(bar.width).toBeGreaterThan(50);
    if (profile.achieved_flops !== null && profile.system.peak_flops !== null) {
      expect(await page.locator('[data-figure="flops"] meter').getAttribute('value')).toBe(String(meterValue(profile.achieved_flops)));
    }
  });

  it('History: one point is not "no change", ok → failed is a flagged change, and the test states what it could detect', async () => {
    await open('history.html');
    const summary = (await page.locator('#history-summary').textContent()) ?? '';
    expect(summary).toMatch(/one point only: nothing to compare/);
    expect(summary).toMatch(/status changes/);
    const verdicts = await page.locator('table#history tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-verdict')));
    expect(verdicts.filter((v) => v === 'one point').length).toBeGreaterThan(0);
    expect(verdicts.filter((v) => v !== 'one point')).toHaveLength(2);

    // The cell whose model file broke: ok, then failed.
    await page.locator('table#history a', { hasText: /^digits_cnn · onnxruntime · .* · batch 1 ·/ }).click();
    expect(await page.locator('#history-verdict').getAttribute('data-verdict')).toBe('changed');
    expect(await page.locator('table#series-points tbody tr').nth(1).textContent()).toMatch(/ok → failed/);
    await expectDrawn('history', 'history-status', { marks: false });

    // The re-measured cell: two ok points, and the smallest change Welch's test could flag, from their sessions.
    await open('history.html');
    await page.locator('table#history a', { hasText: /^digits_cnn_obc_2of4 · onnxruntime · .* · batch 1 ·/ }).click();
    const series = okProfiles()
      .filter((p) => p.model?.name === 'digits_cnn_obc_2of4' && p.engine.name === 'onnxruntime' && p.workload.batch_size === 1)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
    expect(series).toHaveLength(2);
    const sessions = series.map((p) => p.sessions.map((s) => s.throughput_sps));
    const detectable = detectableChange(sessions[0]!, sessions[1]!, CHANGE_P);
    expect(detectable).not.toBeNull();
    expect(await page.locator('table#series-points tbody tr').nth(1).textContent()).toContain(`±${fmtPct(detectable!.threshold)}`);
    const history = await expectDrawn('history', 'history');
    expect(history.rows).toBe(2);
  });
});
