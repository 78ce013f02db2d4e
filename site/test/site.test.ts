import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { EXPORTED_RELATIONS, openStore, runQuery, SITE_BUILD_LOCKED_EXIT, StoredProfileSchema, type StoredProfile } from '@pbh/core';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fmtCount, fmtNum } from '../src/lib/format.js';
import { CHROMIUM, collect, pbh, PBH, readGz, readJsonGz, ROOT, type CliResult } from './cli.js';

const SITE_DIR = path.join(ROOT, 'site');
const SUITE = path.join(ROOT, '.cache', 'suite');
const SHOTS = path.join(ROOT, 'site', 'test', 'screenshots');
const HOSTILE = '<script>alert(1)</script>';
const BASE_PATH = '/nested/pbh results/';


/** `pbh site serve` on a free port under a nested folder with a space: proves links are relative and base-independent. */
function serve(dir: string): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PBH, 'site', 'serve', '--dir', dir, '--port', '0', '--base', BASE_PATH], { cwd: ROOT });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`pbh site serve did not start: ${out}`)), 20_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const match = / at (http:\/\/\S+) /.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    });
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`pbh site serve exited (${code}): ${out}`)));
  });
}

async function profileCount(db: string): Promise<{ total: number; ok: number }> {
  const store = await openStore(db, { readOnly: true });
  try {
    const result = await runQuery(store, "SELECT count(*)::INTEGER, count(*) FILTER (status = 'ok')::INTEGER FROM profiles");
    return { total: Number(result.rows[0]?.[0]), ok: Number(result.rows[0]?.[1]) };
  } finally {
    await store.close();
  }
}

const BROWSER_ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Everything that would show up as a problem in the browser, collected across all pages of a context. */
interface Problems {
  console: string[];
  dialogs: string[];
  failed: string[];
}

function watch(context: BrowserContext): Problems {
  const problems: Problems = { console: [], dialogs: [], failed: [] };
  context.on('page', (page) => {
    page.on('console', (m) => {
      if (m.type() === 'error') problems.console.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.console.push(`${page.url()}: ${e.message}`));
    page.on('dialog', (d) => {
      problems.dialogs.push(`${page.url()}: ${d.message()}`);
      void d.dismiss();
    });
    page.on('requestfailed', (r) => {
      // Leaving a page cancels what it was still loading (the SQL console's worker during the crawl): not a failure.
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.failed.push(`${r.url()}: ${r.failure()?.errorText ?? 'failed'}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) problems.failed.push(`${r.url()}: HTTP ${r.status()}`);
    });
  });
  return problems;
}

let tmp: string;
let db: string;
let out: string;
let counts: { total: number; ok: number };
let server: { child: ChildProcess; url: string };
let context: BrowserContext;
let problems: Problems;
let page: Page;
let buildResult: CliResult;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pbh-site-test-'));
  db = path.join(tmp, 'results.duckdb');
  out = path.join(tmp, 'site out');
  const model = (name: string, file: string, extra: Record<string, unknown> = {}) => ({
    name,
    path: path.join(SUITE, 'models', file),
    family: 'cnn',
    framework: 'numpy',
    weights: 'trained',
    ...extra,
  });
  const config = {
    name: 'site-test',
    seed: 0,
    dataset: {
      kind: 'npy',
      name: 'digits-npy',
      inputs: { x: path.join(SUITE, 'data', 'digits_x.npy') },
      labels: path.join(SUITE, 'data', 'digits_y.npy'),
      limit: 64,
    },
    models: [
      model('digits_cnn', 'digits_cnn.onnx'),
      model('digits_cnn_sparse50', 'digits_cnn_sparse50.onnx', { optimization: { sparsity: { kind: 'unstructured', target: 0.5 } } }),
      model(HOSTILE, 'digits_cnn.onnx'),
    ],
    // openvino and tvm join when their packages are installed; otherwise their cells are failed Profiles, which the site must show.
    // openvino-bf16 asks for bf16, which OpenVINO executes only on CPUs with bf16 arithmetic: elsewhere the site must say "fp32 (asked bf16)".
    // ort-server is a second onnxruntime entry in LoadGen's server scenario with a peak search. Its latency bound (1 µs)
    // no runtime meets, so it is INVALID with reasons on any machine, and the search halves from 4,000 queries/s: five
    // tries of 459 queries each (early stopping's minimum), a few seconds in all.
    engines: [
      { name: 'onnxruntime', options: { intraOpNumThreads: 2 } },
      { name: 'openvino' },
      { name: 'openvino', label: 'openvino-bf16', precision: 'bf16' },
      { name: 'tvm' },
      {
        name: 'onnxruntime', label: 'ort-server', options: { intraOpNumThreads: 2 },
        scenario: { kind: 'server', target_qps: 4000, latency_bound_ms: 0.001, min_duration_ms: 0, find_peak: true },
      },
    ],
    exclude: [
      { model: HOSTILE, engine: 'openvino-bf16' },
      { model: 'digits_cnn_sparse50', engine: 'openvino-bf16' },
      { model: HOSTILE, engine: 'ort-server' },
      { model: 'digits_cnn_sparse50', engine: 'ort-server' },
      { engine: 'ort-server', batch_size: 8 },
    ],
    batch_sizes: [1, 8],
    warmup_batches: 1,
    sessions: 2,
    scorers: ['top1'],
  };
  const configFile = path.join(tmp, 'site-test.json');
  await writeFile(configFile, JSON.stringify(config, null, 2));
  const run = await pbh(['run', configFile, '--db', db]);
  if (run.code !== 0 && run.code !== 1) throw new Error(`pbh run failed (${run.code}): ${run.stderr}\n${run.stdout}`);
  counts = await profileCount(db);

  buildResult = await pbh(['site', 'build', '--db', db, '--out', out]);
  if (buildResult.code !== 0) throw new Error(`pbh site build failed (${buildResult.code}): ${buildResult.stderr}`);
  server = await serve(out);

  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get update && apt-get install -y chromium`);
  mkdirSync(SHOTS, { recursive: true });
  context = await chromium.launchPersistentContext(path.join(tmp, 'chromium-profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: BROWSER_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  problems = watch(context);
  page = await context.newPage();
}, 300_000);

afterAll(async () => {
  await context?.close();
  server?.child.kill('SIGTERM');
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const url = (relative: string): string => new URL(relative, server.url).href;

describe('pbh site build from a real pbh run', () => {
  it('writes every page type, the downloads, the Parquet export and duckdb-wasm, and says where to open it', () => {
    expect(counts.ok).toBeGreaterThan(0);
    expect(buildResult.stdout).toContain(out);
    expect(buildResult.stdout).toContain('pbh site serve');
    for (const page of ['index.html', 'models.html', 'engines.html', 'comparisons.html', 'history.html', 'runs.html', 'sql.html', '404.html']) {
      expect(existsSync(path.join(out, page)), page).toBe(true);
    }
    expect(readdirSync(path.join(out, 'profiles')).filter((f) => f.endsWith('.html'))).toHaveLength(counts.total);
    expect(readdirSync(path.join(out, 'models')).filter((f) => f.endsWith('.html'))).toHaveLength(3);
    expect(readdirSync(path.join(out, 'history')).filter((f) => f.endsWith('.html')).length).toBeGreaterThan(0);
    for (const relation of EXPORTED_RELATIONS) expect(existsSync(path.join(out, 'data', 'parquet', `${relation}.parquet`)), relation).toBe(true);
    // One duckdb-wasm build, the one the console loads (exception handling): the MVP build would be 39 MB never fetched.
    expect(readdirSync(path.join(out, 'duckdb')).sort()).toEqual(['duckdb-browser-eh.worker.js', 'duckdb-eh.wasm']);
  });

  it('publishes every page as CSV and JSON, and each Profile in full', async () => {
    const leaderboard = readJsonGz(path.join(out, 'data', 'leaderboard.json.gz')) as { status: string; model: string }[];
    expect(leaderboard).toHaveLength(counts.total);
    expect(leaderboard.some((row) => row.model === HOSTILE)).toBe(true);
    const csv = readGz(path.join(out, 'data', 'leaderboard.csv.gz')).trimEnd().split('\r\n');
    expect(csv[0]).toMatch(/^profile_id,created_at,run_id,status,error,model,/);
    expect(csv).toHaveLength(counts.total + 1);

    const okRow = leaderboard.find((row) => row.status === 'ok') as unknown as { profile_id: string };
    const profileFiles = readdirSync(path.join(out, 'data', 'profiles')).filter((f) => f.endsWith('.json.gz'));
    expect(profileFiles).toHaveLength(counts.total);
    const gunzipped = (f: string) => gunzipSync(readFileSync(path.join(out, 'data', 'profiles', f))).toString('utf8');
    const raw = profileFiles.map((f) => JSON.parse(gunzipped(f)) as { samples_query?: unknown });
    expect(readdirSync(path.join(out, 'data', 'profiles'))).toHaveLength(counts.total);
    const profiles = raw.map((r) => StoredProfileSchema.parse(r));
    const index = profiles.findIndex((p) => p.profile_id === okRow.profile_id);
    const full = profiles[index]!;
    expect(full.command).toMatch(/pbh run .* --only /);
    // Each JSON says how to read its raw samples from the published database: as many per boundary as its statistics counted.
    const query = String(raw[index]!.samples_query);
    expect(query).toContain(`profile_id = '${okRow.profile_id}'`);
    const published = await openStore(path.join(out, 'data', 'pbh.duckdb'), { readOnly: true });
    try {
      const samples = await runQuery(published, `SELECT boundary, count(*)::INTEGER AS n FROM (${query}) GROUP BY boundary`);
      const counted = Object.fromEntries(samples.rows.map(([boundary, n]) => [String(boundary), Number(n)]));
      const expected = Object.fromEntries(Object.entries(full.latency).flatMap(([boundary, stats]) => (stats ? [[boundary, stats.n]] : [])));
      expect(counted).toEqual(expected);
    } finally {
      await published.close();
    }
    // Each model's and engine's slice of the leaderboard: between them, every Profile once.
    for (const group of ['models', 'engines']) {
      const slices = readdirSync(path.join(out, 'data', group));
      expect(slices.every((f) => f.endsWith('.csv.gz')), group).toBe(true);
      const rows = slices.flatMap((f) => readGz(path.join(out, 'data', group, f)).trimEnd().split('\r\n').slice(1));
      expect(rows, group).toHaveLength(counts.total);
    }
    for (const name of ['models', 'engines', 'history', 'runs', 'comparisons-speedup', 'comparisons-sparsity', 'comparisons-batch', 'comparisons-pareto']) {
      expect(readGz(path.join(out, 'data', `${name}.csv.gz`)), name).toMatch(/^\S+,/);
      expect(() => readJsonGz(path.join(out, 'data', `${name}.json.gz`))).not.toThrow();
    }
  });

  it('crawls every internal link from the leaderboard: none broken, none absolute, no console errors, no dialogs', async () => {
    const pages = new Set<string>();
    const resources = new Set<string>();
    const queue = [url('index.html')];
    const origin = new URL(server.url).origin;
    const basePath = new URL(server.url).pathname;
    while (queue.length > 0) {
      const next = queue.shift()!;
      if (pages.has(next)) continue;
      pages.add(next);
      const response = await page.goto(next);
      expect(response?.status(), next).toBe(200);
      // A chart's point is an SVG <a> (History opens each point's Profile): its href is an attribute to resolve.
      const links = await page.$$eval('a[href], link[href], script[src]', (elements) =>
        elements.map((e) =>
          e instanceof HTMLScriptElement
            ? e.src
            : e instanceof SVGAElement
              ? new URL(e.getAttribute('href') ?? '', document.baseURI).href
              : (e as HTMLAnchorElement | HTMLLinkElement).href,
        ),
      );
      for (const link of links) {
        const target = new URL(link);
        expect(target.origin, `${next} links outside the site: ${link}`).toBe(origin);
        expect(target.pathname.startsWith(basePath), `${next} links above the site's folder: ${link}`).toBe(true);
        target.hash = '';
        if (target.pathname.endsWith('.html')) {
          if (!pages.has(target.href)) queue.push(target.href);
        } else {
          resources.add(target.href);
        }
      }
    }
    for (const resource of resources) {
      const response = await fetch(resource, { method: 'HEAD' });
      expect(response.status, resource).toBe(200);
    }
    // Every page type was reached by following links alone.
    const paths = [...pages].map((p) => decodeURIComponent(new URL(p).pathname.slice(basePath.length)));
    for (const kind of [/^index\.html$/, /^models\//, /^engines\//, /^profiles\//, /^history\//, /^comparisons\.html$/, /^sql\.html$/, /^runs\.html$/]) {
      expect(paths.some((p) => kind.test(p)), String(kind)).toBe(true);
    }
    expect(paths.filter((p) => p.startsWith('profiles/'))).toHaveLength(counts.total);
    expect(problems.console).toEqual([]);
    expect(problems.dialogs).toEqual([]);
    expect(problems.failed).toEqual([]);
  });

  it("serves the console's database in byte ranges, as duckdb-wasm asks for them", async () => {
    const file = url('data/pbh.duckdb');
    const size = readFileSync(path.join(out, 'data', 'pbh.duckdb')).length;
    const ranged = async (range: string, method = 'GET') => {
      const response = await fetch(file, { method, headers: { Range: range } });
      const body = method === 'HEAD' ? 0 : (await response.arrayBuffer()).byteLength;
      return { status: response.status, range: response.headers.get('content-range'), length: response.headers.get('content-length'), body };
    };
    // duckdb-wasm's probes (HEAD bytes=0-, GET bytes=0-0), a page read, a suffix, and one past the end.
    expect(await ranged('bytes=0-', 'HEAD')).toEqual({ status: 206, range: `bytes 0-${size - 1}/${size}`, length: String(size), body: 0 });
    expect(await ranged('bytes=0-0')).toEqual({ status: 206, range: `bytes 0-0/${size}`, length: '1', body: 1 });
    expect(await ranged('bytes=4096-8191')).toEqual({ status: 206, range: `bytes 4096-8191/${size}`, length: '4096', body: 4096 });
    expect(await ranged('bytes=-100')).toMatchObject({ status: 206, range: `bytes ${size - 100}-${size - 1}/${size}`, body: 100 });
    expect(await ranged(`bytes=${size}-`)).toMatchObject({ status: 416, range: `bytes */${size}` });
    expect((await fetch(file, { method: 'HEAD' })).headers.get('accept-ranges')).toBe('bytes');
  });

  it('sorts and filters the leaderboard, keeping non-ok rows unranked at the bottom', async () => {
    await page.goto(url('index.html'));
    // Throughputs of the ok rows, group by group (each <tbody> is one ranking group; sorting sorts within it).
    const throughputs = async (): Promise<number[][]> =>
      page.locator('table#lb tbody').evaluateAll((bodies: HTMLTableSectionElement[]) =>
        bodies.map((b) => [...b.rows].filter((r) => !r.classList.contains('g') && !r.classList.contains('x')).map((r) => Number((r.cells[4]?.dataset.v ?? r.cells[4]?.textContent ?? '').replace(/,/g, '')))),
      );
    await page.getByRole('button', { name: 'Samples/s' }).click();
    const descending = await throughputs();
    expect(descending.flat().length).toBe(counts.ok);
    for (const group of descending) expect(group).toEqual([...group].sort((a, b) => b - a));
    await page.getByRole('button', { name: 'Samples/s' }).click();
    for (const group of await throughputs()) expect(group).toEqual([...group].sort((a, b) => a - b));
    // Failed/skipped rows stay after every ok row whatever the sort.
    const classes = await page.locator('table#lb tbody tr:not(.g)').evaluateAll((rows) => rows.map((r) => r.className));
    expect(classes.indexOf('x') === -1 || classes.slice(classes.indexOf('x')).every((c) => c === 'x')).toBe(true);

    await page.locator('select[data-col="1"]').selectOption('onnxruntime');
    const engines = await page.locator('table#lb tbody tr:not([hidden]):not(.g) td:nth-child(2)').allTextContents();
    expect(engines.length).toBeGreaterThan(0);
    expect(new Set(engines)).toEqual(new Set(['onnxruntime']));
    await page.locator('select[data-key="model"]').selectOption(HOSTILE);
    const models = await page.locator('table#lb tbody:not([hidden])').evaluateAll((bodies: HTMLElement[]) => bodies.map((b) => b.dataset.model));
    expect(new Set(models)).toEqual(new Set([HOSTILE]));
    await expect.poll(() => page.locator('output[data-count]').textContent()).toMatch(/^\d+ of \d+ rows$/);
    await page.locator('select[data-key="model"]').selectOption('');
    await page.locator('select[data-col="1"]').selectOption('');
    await page.locator('select[data-status]').selectOption('x');
    const hidden = await page.locator('table#lb tbody tr:not([hidden]):not(.g)').evaluateAll((rows) => rows.map((r) => r.className));
    expect(hidden.every((c) => c === 'x')).toBe(true);
    expect(hidden.length).toBe(counts.total - counts.ok);
    await page.locator('select[data-status]').selectOption('');
    await page.screenshot({ path: path.join(SHOTS, 'leaderboard.png'), fullPage: false });
  });

  /** The full Profile a leaderboard row links to, from the site's own download beside its page. */
  const linkedProfile = (href: string): StoredProfile => {
    const slug = /profiles\/([^/]+)\.html$/.exec(href)?.[1] ?? '';
    return StoredProfileSchema.parse(JSON.parse(gunzipSync(readFileSync(path.join(out, 'data', 'profiles', `${slug}.json.gz`))).toString('utf8')));
  };
  const precisionText = (p: StoredProfile): string => {
    const facts = p.engine.precision;
    if (!facts) return '—';
    return facts.executed === facts.requested ? facts.executed : `${facts.executed} (asked ${facts.requested})`;
  };

  it("shows each Profile's executed precision, with the request where the runtime did otherwise, and the headline latency labelled", async () => {
    await page.goto(url('index.html'));
    const headings = (await page.locator('table#lb thead th').allTextContents()).map((t) => t.trim());
    // Stream Profiles are at the engine boundary and the server one at query, so the headings say "headline" and each value names its boundary.
    expect(headings.slice(3, 7)).toEqual(['Verdict', 'Samples/s', 'p50 ms (headline)', 'p99 ms (headline)']);
    const rows = await page.locator('table#lb tbody tr:not(.g)').evaluateAll((trs: HTMLTableRowElement[]) =>
      trs.map((tr) => {
        // A row's executed precision is its own (its Precision cell, and <tr data-precision>), the request under its entry.
        const asked = /asked (\S+)/.exec(tr.cells[1]?.querySelector('small')?.textContent ?? '')?.[1];
        const executed = tr.dataset.precision ?? '';
        return {
          ok: !tr.classList.contains('x'),
          precision: asked ? `${executed} (asked ${asked})` : executed,
          text: tr.textContent ?? '',
          p50: tr.cells[5]?.textContent ?? '',
          p99: tr.cells[6]?.textContent ?? '',
          href: tr.querySelector('a[href^="profiles/"]')?.getAttribute('href') ?? '',
        };
      }),
    );
    expect(rows).toHaveLength(counts.total);
    for (const row of rows) {
      const profile = linkedProfile(row.href);
      // A row that is not ok names its precision in its reason, where one was resolved.
      if (!row.ok) {
        if (precisionText(profile) !== '—') expect(row.text, row.href).toContain(precisionText(profile));
        continue;
      }
      expect(row.precision, row.href).toBe(precisionText(profile));
      const boundary = profile.workload.scenario === 'server' ? 'query' : 'engine';
      expect(profile.headline_boundary, row.href).toBe(boundary);
      expect(row.p50, row.href).toBe(`${fmtNum(profile.latency[boundary]!.p50 / 1e6)} ${boundary}`);
      expect(row.p99, row.href).toBe(`${fmtNum(profile.latency[boundary]!.p99 / 1e6)} ${boundary}`);
    }

    // Where OpenVINO ran, the bf16 entry's rows say what executed and what was asked.
    const askedBf16 = rows.filter((r) => r.ok && linkedProfile(r.href).engine.precision?.requested === 'bf16');
    if (rows.some((r) => r.ok && linkedProfile(r.href).engine.name === 'openvino')) expect(askedBf16).toHaveLength(2);
    for (const row of askedBf16) expect(row.precision).toMatch(/^(bf16|fp32 \(asked bf16\))$/);
    if (askedBf16.length > 0) {
      const executed = askedBf16[0]!.precision.split(' ')[0]!;
      await page.locator('select[data-key="precision"]').selectOption(executed);
      const shown = await page.locator('table#lb tbody tr:not([hidden]):not(.g)').evaluateAll((rows: HTMLElement[]) => rows.map((r) => r.dataset.precision));
      expect(new Set(shown)).toEqual(new Set([executed]));
      await page.locator('select[data-key="precision"]').selectOption('');
    }

    // The downloads carry the leaderboard view's fields: the headline figures with their boundary, precision, scenario and verdict.
    const csv = readGz(path.join(out, 'data', 'leaderboard.csv.gz')).split('\r\n')[0]!.split(',');
    expect(csv).toEqual(
      expect.arrayContaining([
        'precision', 'precision_requested', 'latency_boundary', 'p50_ms', 'p99_ms', 'engine_p99_ms', 'predict_p50_ms', 'transport_p50_ms',
        'engine_entry', 'scenario', 'validity', 'validity_reasons', 'scenario_metric', 'scenario_value', 'query_p50_ms', 'query_p99_ms',
      ]),
    );
    const json = readJsonGz(path.join(out, 'data', 'leaderboard.json.gz')) as Record<string, unknown>[];
    for (const row of json.filter((r) => r.status === 'ok')) {
      const boundary = row.scenario === 'server' ? 'query' : 'engine';
      expect(row).toMatchObject({
        latency_boundary: boundary, p50_ms: row[`${boundary}_p50_ms`], p99_ms: row[`${boundary}_p99_ms`],
        precision: expect.any(String), precision_requested: expect.any(String), validity: expect.stringMatching(/^(VALID|INVALID)$/),
        validity_reasons: expect.any(Array), scenario_metric: expect.any(String), scenario_value: expect.any(Number),
      });
      if (boundary === 'engine') expect(row.transport_p50_ms).toEqual(expect.any(Number));
    }
  });

  it('shows each row\'s scenario with its VALID/INVALID badge and every reason, the engine entry, and ranks within model, batch, scenario, precision and hardware', async () => {
    await page.goto(url('index.html'));
    const rows = await page.locator('table#lb tbody tr:not(.g)').evaluateAll((trs: HTMLTableRowElement[]) =>
      trs.map((tr) => {
        const badge = tr.cells[3]?.querySelector('.verdict');
        const body = tr.parentElement as HTMLTableSectionElement;
        const why = tr.cells[3]?.querySelector('small.why')?.textContent ?? null;
        // The second line names the engine, then TVM's tuning and the precision asked for where they apply.
        const sub = (tr.cells[1]?.querySelector('small')?.textContent ?? '').split(' · ').filter((part) => !part.startsWith('asked ') && part !== 'untuned' && part !== 'tuned');
        return {
          ok: !tr.classList.contains('x'),
          rank: tr.cells[0]?.textContent ?? '',
          model: body.dataset.model ?? '',
          entry: (tr.cells[1]?.dataset.v ?? tr.cells[1]?.textContent ?? '').trim(),
          engine: sub[0] || null,
          scenario: tr.dataset.scenario ?? body.dataset.scenario ?? (/ · (\w+)/.exec(tr.cells[3]?.textContent ?? '')?.[1] ?? ''),
          group: [...body.parentElement!.children].indexOf(body),
          verdict: badge?.textContent ?? null,
          reasons: badge?.getAttribute('title') ?? null,
          why,
          kind: body.dataset.kind ?? '',
          throughput: Number((tr.cells[4]?.dataset.v ?? tr.cells[4]?.textContent ?? '').replace(/,/g, '')),
          href: tr.querySelector('a[href^="profiles/"]')?.getAttribute('href') ?? '',
        };
      }),
    );
    for (const row of rows) {
      const profile = linkedProfile(row.href);
      expect(row.scenario, row.href).toBe(profile.workload.scenario);
      expect(row.entry, row.href).toBe(profile.engine.label ?? profile.engine.name);
      expect(row.engine, row.href).toBe(profile.engine.label === null || profile.engine.label === profile.engine.name ? null : profile.engine.name);
      // A row that is not ok shows its cause in the verdict's place; its Profile page has the verdict.
      if (!row.ok) continue;
      expect(row.verdict, row.href).toBe(profile.scenario?.validity ?? null);
      for (const reason of profile.scenario?.reasons ?? []) expect(row.reasons, row.href).toContain(reason);
      // An INVALID row is in a group of its own, unranked, and says why in the row itself.
      if (row.verdict === 'INVALID') {
        expect(row, row.href).toMatchObject({ kind: 'invalid', rank: '' });
        expect(row.why, row.href).toBeTruthy();
      }
    }
    const server = rows.filter((r) => r.entry === 'ort-server');
    expect(server).toHaveLength(1);
    expect(server[0]).toMatchObject({ ok: true, model: 'digits_cnn', engine: 'onnxruntime', scenario: 'server', verdict: 'INVALID', rank: '', kind: 'invalid' });
    expect(server[0]!.reasons).toMatch(/^INVALID \(p99_latency_ms [\d.,]+\)\n• /);
    expect(server[0]!.why).toContain('exceeds the latency bound');

    // Ranks count from 1 among the VALID rows of each (model, batch size, scenario, hardware), fastest first whatever
    // the precision; the leaderboard view ranks within each precision, so a row's view rank counts its precision's rows.
    const store = await openStore(db, { readOnly: true });
    let viewRanks: Map<string, number>;
    try {
      const view = await runQuery(store, 'SELECT profile_id, rank_in_group FROM leaderboard');
      viewRanks = new Map(view.rows.map(([id, rank]) => [String(id), Number(rank)]));
    } finally {
      await store.close();
    }
    const seen = new Map<string, { count: number; last: number }>();
    for (const row of rows.filter((r) => r.ok && r.kind === 'ranked')) {
      const key = String(row.group);
      const before = seen.get(key);
      seen.set(key, { count: (before?.count ?? 0) + 1, last: row.throughput });
      expect(Number(row.rank), row.href).toBe(seen.get(key)!.count);
      if (before) expect(row.throughput, row.href).toBeLessThanOrEqual(before.last);
      // Every ranked row is in the view, whose rank counts within the row's precision only: never more than the site's.
      expect(viewRanks.get(linkedProfile(row.href).profile_id), row.href).toBeLessThanOrEqual(Number(row.rank));
    }

    // The filters read the entry and the scenario, not the second line under them.
    await page.locator('select[data-col="1"]').selectOption('ort-server');
    expect(await page.locator('table#lb tbody tr:not([hidden]):not(.g)').count()).toBe(1);
    await page.locator('select[data-col="1"]').selectOption('');
    await page.locator('select[data-key="scenario"]').selectOption('server');
    expect(await page.locator('table#lb tbody tr:not([hidden]):not(.g) td:nth-child(2)').evaluateAll((cells: HTMLTableCellElement[]) => cells.map((c) => c.dataset.v))).toEqual(['ort-server']);
    await page.locator('select[data-key="scenario"]').selectOption('');

    // Twelve columns fit a 1400 px window without scrolling sideways.
    await page.setViewportSize({ width: 1400, height: 900 });
    try {
      const fit = await page.locator('table#lb').evaluate((table) => ({ table: table.scrollWidth, room: table.parentElement?.clientWidth ?? 0 }));
      expect(fit.table).toBeLessThanOrEqual(fit.room);
      await page.screenshot({ path: path.join(SHOTS, 'leaderboard-1400.png'), fullPage: false });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('shows on a server Profile page its scenario: kind, rules, executor, reported figure, every reason, issue delay and the peak search', async () => {
    await page.goto(url('index.html'));
    const href = await page.locator('table#lb tbody tr', { has: page.locator('td[data-v="ort-server"]') }).locator('a[href^="profiles/"]').getAttribute('href');
    const profile = linkedProfile(href ?? '');
    const scenario = profile.scenario!;
    expect(scenario).toMatchObject({ kind: 'server', validity: 'INVALID' });
    expect(scenario.reasons.length).toBeGreaterThan(0);
    expect(scenario.peak_search.length).toBeGreaterThan(1);
    await page.goto(url(href ?? ''));
    const fact = (name: string) => page.locator('dl.facts dt', { hasText: new RegExp(`^${name}$`) }).locator('xpath=following-sibling::dd[1]').textContent();

    expect(await page.locator('h1').textContent()).toContain('ort-server (onnxruntime)');
    expect(await page.locator('#scenario + p .verdict').textContent()).toBe('INVALID');
    expect(await page.locator('ul.reasons li').allTextContents()).toEqual(scenario.reasons);
    expect(await fact('Kind')).toBe('server');
    expect(await fact('Rules')).toMatch(new RegExp(`^${scenario.rules}: `));
    expect(await fact('Executor')).toMatch(new RegExp(`^${scenario.executor}: `));
    expect(await fact('Reported')).toContain(`${scenario.reported.name} = ${fmtNum(scenario.reported.value)} ${scenario.reported.unit}`);
    expect(await fact('Early stopping')).toContain(scenario.early_stopping_ms === null ? 'no estimate' : `${fmtNum(scenario.early_stopping_ms)} ms`);

    const delay = scenario.issue_delay!;
    expect(await page.locator('table.issue-delay tbody td').allTextContents()).toEqual(
      [fmtCount(delay.n), ...[delay.mean, delay.p50, delay.p90, delay.p99, delay.max].map((ns) => fmtNum(ns / 1e6))],
    );
    const tries = await page.locator('table.peak-search tbody tr').evaluateAll((trs: HTMLTableRowElement[]) => trs.map((tr) => [...tr.cells].map((c) => c.textContent ?? '')));
    expect(tries).toEqual(scenario.peak_search.map((t, i) => [String(i + 1), fmtNum(t.target_qps), t.validity, fmtNum(t.p99_ms), t.reasons.join('; ') || '—']));
    // A 1 µs bound: no rate is VALID, and the page says the sessions ran at the configured rate.
    expect(await page.locator('p.note', { hasText: 'FindPeakPerformance' }).textContent()).toContain('No rate tried was VALID');

    expect(await page.locator('p.note', { hasText: 'Headline boundary:' }).textContent()).toContain(
      "Headline boundary: query (server/offline: from the query's scheduled arrival to its completion, queueing included)",
    );
    const boundaries = await page.locator('table.num', { hasText: 'Boundary' }).first().locator('tbody td:first-child').allTextContents();
    expect(boundaries).toEqual(expect.arrayContaining(['query (headline)']));
    await page.screenshot({ path: path.join(SHOTS, 'profile-scenario.png'), fullPage: true });
  });

  it('keeps two entries of one engine apart in History and comparisons, and compares scenarios apart', () => {
    const history = readJsonGz(path.join(out, 'data', 'history.json.gz')) as Record<string, unknown>[];
    const server = history.filter((r) => r.engine_entry === 'ort-server');
    const plain = history.filter((r) => r.engine_entry === 'onnxruntime' && r.model === 'digits_cnn' && r.batch_size === 1);
    expect(server.length).toBeGreaterThan(0);
    expect(plain.length).toBeGreaterThan(0);
    // Same model, engine, precision, device, batch size and hardware; the entry (and its scenario) makes a series of its own.
    expect(server.map((r) => [r.engine, r.precision, r.scenario])).toEqual(server.map(() => ['onnxruntime', plain[0]!.precision, 'server']));
    expect(String(server[0]!.series)).toContain('ort-server');
    expect(server.filter((r) => plain.some((p) => p.series === r.series))).toEqual([]);

    const speedup = readJsonGz(path.join(out, 'data', 'comparisons-speedup.json.gz')) as Record<string, unknown>[];
    const serverCells = speedup.filter((r) => r.scenario === 'server');
    expect(serverCells).toEqual([expect.objectContaining({ model: 'digits_cnn', batch_size: 1, engine: 'ort-server', versus: 'ort-server', speedup: 1 })]);
    expect(speedup.filter((r) => r.scenario !== 'server').every((r) => r.engine !== 'ort-server' && r.versus !== 'ort-server')).toBe(true);
  });

  it('shows on a Profile page the precision with its evidence, the headline boundary, transport, the gate and what was timed and scored', async () => {
    await page.goto(url('index.html'));
    const hrefs = await page.locator('table#lb tbody tr:not(.x) a[href^="profiles/"]').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    const ok = hrefs.map((href) => ({ href, profile: linkedProfile(href) }));
    // The bf16 entry where OpenVINO ran (its evidence is the runtime's own account), else any reference-checked one; a
    // stream Profile, whose headline is the engine boundary (the server one's is query, checked on its own below).
    const streams = ok.filter((c) => c.profile.workload.scenario !== 'server');
    const chosen = streams.find((c) => c.profile.engine.precision?.requested === 'bf16') ?? streams.find((c) => c.profile.correctness !== null) ?? streams[0]!;
    const profile = chosen.profile;
    const precision = profile.engine.precision!;
    await page.goto(url(chosen.href));
    const fact = (name: string) => page.locator('dl.facts dt', { hasText: new RegExp(`^${name}$`) }).locator('xpath=following-sibling::dd[1]').textContent();

    const precisionFact = await fact('Precision');
    expect(precisionFact).toContain(`executed ${precision.executed}, asked for ${precision.requested}, the model file's own ${precision.model}.`);
    expect(precisionFact).toContain(precision.evidence);
    if (precision.executed !== precision.requested) expect(precisionFact).toContain(`did not execute the ${precision.requested} asked for`);
    expect(await page.locator('p.note', { hasText: 'Headline boundary:' }).textContent()).toContain("Headline boundary: engine (measured in the runtime's process around its call");

    const boundaries = await page.locator('table.num', { hasText: 'Boundary' }).first().locator('tbody td:first-child').allTextContents();
    expect(boundaries).toEqual(expect.arrayContaining(['engine (headline)', 'predict', 'transport']));
    // What each boundary means is said once, on the Glossary, which the page links.
    expect(await page.locator('p.note a[href="../glossary.html#boundaries"]').count()).toBe(1);
    expect(await page.locator('[data-chart="ecdf"] [class$="-swatch"]').allTextContents()).toEqual(expect.arrayContaining([`transport (n=${profile.latency.transport!.n})`]));

    const samples = await fact('Samples');
    expect(samples).toContain(`timed: ${profile.workload.sessions} sessions × ${fmtCount(profile.workload.samples_per_session)} samples`);
    expect(samples).toContain(`scored: ${profile.workload.samples_scored} samples in the accuracy pass`);
    expect(await fact('CPU and memory metrics')).toContain(profile.engine.process === 'worker' ? "the engine's worker process" : "PBH's own process");
    if (profile.correctness) {
      const gate = await fact('Correctness');
      expect(gate).toContain(`Tolerance rule: ${profile.correctness.tolerance_rule}.`);
      for (const output of profile.correctness.outputs) expect(gate).toContain(output.name);
    }
    await page.screenshot({ path: path.join(SHOTS, 'profile-precision.png'), fullPage: true });
  });

  it('shows the hostile model name as text everywhere, and no dialog fires', async () => {
    await page.goto(url('index.html'));
    await expect.poll(() => page.getByText(HOSTILE, { exact: true }).first().isVisible()).toBe(true);
    await page.getByRole('link', { name: HOSTILE }).first().click();
    await expect.poll(() => page.locator('h1').textContent()).toBe(`Model: ${HOSTILE}`);
    const injected = await page.evaluate(() => [...document.scripts].filter((s) => s.textContent?.includes('alert(1)')).length);
    expect(injected).toBe(0);
    await page.screenshot({ path: path.join(SHOTS, 'model-hostile.png'), fullPage: false });
    expect(problems.dialogs).toEqual([]);
  });

  it('renders a Profile page with its charts, tables, system, config and reproduce command', async () => {
    await page.goto(url('index.html'));
    await page.locator('table#lb tbody tr:not(.x) a[href^="profiles/"]').first().click();
    await expect.poll(() => page.locator('h2').allTextContents()).toEqual(
      expect.arrayContaining(['Latency distribution', 'Stability across sessions', 'Per-layer breakdown', 'Achieved vs peak FLOP/s', 'Reproduce', 'System', 'Full config']),
    );
    const charts = await page.locator('svg[role="img"]').evaluateAll((svgs) =>
      svgs.map((svg) => ({ title: svg.querySelector('title')?.textContent ?? '', desc: svg.querySelector('desc')?.textContent ?? '', text: svg.textContent ?? '' })),
    );
    // The latency ECDF; sessions, layers and FLOP/s are tables with bars.
    expect(charts.length).toBeGreaterThanOrEqual(1);
    expect(await page.locator('table[data-table="sessions"] meter').count()).toBeGreaterThan(0);
    for (const chart of charts) {
      expect(chart.title.length).toBeGreaterThan(0);
      expect(chart.desc.length).toBeGreaterThan(20);
    }
    // The unit follows the values (µs, ms or s), so which one the first-ranked Profile gets depends on the machine.
    expect(charts.some((c) => /Latency per batch \((µs|ms|s)[,)]/.test(c.text))).toBe(true);
    expect(await page.locator('pre code').first().textContent()).toMatch(/pbh run .* --only /);
    await page.goto(url('glossary.html'));
    const meaning = (name: string) => page.locator('#boundaries + p + dl dt', { hasText: new RegExp(`^${name}$`) }).locator('xpath=following-sibling::dd[1]').textContent();
    expect(await meaning('end_to_end')).toBe('preprocess + predict');
    expect(await meaning('transport')).toBe('predict − engine per batch: the transport between PBH and a worker, or the in-process call');
    expect(await meaning('engine')).toBe("measured in the runtime's process around its call, inputs and outputs wrapped — the headline");
    expect(await page.locator('#noisy + p').textContent()).toMatch(/^noisy: a timed session shorter than 100 ms/);
    await page.goBack();
    await page.screenshot({ path: path.join(SHOTS, 'profile.png'), fullPage: true });
    // The Profile keeps its own cell of the config; the run's experiment config is on the run's page, one click away.
    const cell = JSON.parse((await page.locator('h2:has-text("Full config") + details pre').textContent()) ?? '') as { batch_size: number };
    expect(typeof cell.batch_size).toBe('number');
    await page.locator('a', { hasText: "site-test's page" }).click();
    expect(page.url()).toMatch(/\/runs\/[^/]+\.html#config$/);
    const experiment = (JSON.parse((await page.locator('section#config pre').textContent()) ?? '') as { experiment: { name: string; models: { name: string }[] } }).experiment;
    expect(experiment.name).toBe('site-test');
    expect(experiment.models.map((m) => m.name)).toContain(HOSTILE);
    expect(await page.locator('main table a[href^="../profiles/"]').count()).toBeGreaterThan(0);
    await page.goto(url('runs.html'));
    expect(await page.locator('main table a[href^="runs/"]').count()).toBe(await page.locator('main table tbody tr').count());
    await page.goto(url('comparisons.html'));
    await page.screenshot({ path: path.join(SHOTS, 'comparisons.png'), fullPage: false });
    await page.goto(url('history.html'));
    await page.locator('table#history a').first().click();
    expect(await page.locator('body').textContent()).toContain("Welch's t-test");
    await page.screenshot({ path: path.join(SHOTS, 'history.png'), fullPage: false });
  });

  it('runs SQL in the browser console against the published database, results as text', async () => {
    await page.goto(url('sql.html'));
    await expect.poll(() => page.locator('#sql-run').isEnabled(), { timeout: 60_000 }).toBe(true);
    await page.locator('#sql-input').fill("SELECT count(*) AS n, count(*) FILTER (status = 'ok') AS ok FROM profiles");
    await page.locator('#sql-run').click();
    await expect.poll(() => page.locator('#sql-status').textContent(), { timeout: 60_000 }).toMatch(/^1 row in /);
    expect(await page.locator('#sql-result td').allTextContents()).toEqual([String(counts.total), String(counts.ok)]);
    await page.locator('#sql-input').fill(`SELECT DISTINCT model FROM leaderboard WHERE model LIKE '<script>%'`);
    await page.locator('#sql-run').click();
    await expect.poll(() => page.locator('#sql-result td').allTextContents(), { timeout: 30_000 }).toEqual([HOSTILE]);
    await page.locator('#sql-input').fill('SELECT * FROM no_such_table');
    await page.locator('#sql-run').click();
    await expect.poll(() => page.locator('#sql-status').textContent(), { timeout: 30_000 }).toMatch(/Query failed: .*no_such_table/);
    await page.locator('button.sql-example').first().click();
    await expect.poll(() => page.locator('#sql-result tr').count(), { timeout: 30_000 }).toBeGreaterThan(1);
    await page.screenshot({ path: path.join(SHOTS, 'sql-console.png'), fullPage: false });
    // A Profile page's link to its raw samples opens the console with that query run.
    await page.goto(url('index.html'));
    const profileHref = await page.locator('table#lb tbody tr:not(.g) a[href^="profiles/"]').first().getAttribute('href');
    await page.goto(url(profileHref!));
    const samplesLink = page.locator('p.downloads a', { hasText: 'query them in the SQL console' });
    const samplesHref = await samplesLink.getAttribute('href');
    expect(decodeURIComponent(samplesHref!)).toMatch(/^\.\.\/sql\.html#query=SELECT session, batch, boundary, ns FROM samples WHERE profile_id = '/);
    await samplesLink.click();
    await expect.poll(() => page.locator('#sql-status').textContent(), { timeout: 60_000 }).toMatch(/^[1-9][\d,]* rows? /);
    expect(await page.locator('#sql-result th').allTextContents()).toEqual(expect.arrayContaining(['session', 'batch', 'boundary', 'ns']));
    expect(problems.console).toEqual([]);
    expect(problems.failed).toEqual([]);
  });

  it('reads with JavaScript off: full leaderboard, SVG charts, no filter controls', async () => {
    const noJs = await chromium.launchPersistentContext(path.join(tmp, 'chromium-nojs'), {
      executablePath: CHROMIUM,
      headless: true,
      args: BROWSER_ARGS,
      javaScriptEnabled: false,
    });
    try {
      const p = await noJs.newPage();
      await p.goto(url('index.html'));
      expect(await p.locator('table#lb tbody tr:not(.g)').count()).toBe(counts.total);
      expect(await p.locator('form.filters').isVisible()).toBe(false);
      await p.goto(url('comparisons.html'));
      expect(await p.locator('svg[role="img"]').count()).toBeGreaterThan(0);
      expect(await p.locator('table.matrix').count()).toBeGreaterThan(0);
    } finally {
      await noJs.close();
    }
  });
});

describe('pbh site build edge cases', () => {
  it('an empty database builds a helpful page instead of crashing', async () => {
    const empty = path.join(tmp, 'empty.duckdb');
    const store = await openStore(empty);
    await store.close();
    const emptyOut = path.join(tmp, 'empty-site');
    const result = await pbh(['site', 'build', '--db', empty, '--out', emptyOut]);
    expect(result.code, result.stderr).toBe(0);
    const index = readFileSync(path.join(emptyOut, 'index.html'), 'utf8');
    expect(index).toContain('No Profiles yet');
    expect(index).toContain('pbh run configs/digits.yaml');
    expect(readFileSync(path.join(emptyOut, 'comparisons.html'), 'utf8')).toContain('No ok Profiles to compare yet');
  });

  it('a database held by a running writer fails fast, naming the file and saying to wait or use a copy', async () => {
    const busy = path.join(tmp, 'busy.duckdb');
    const writer = await openStore(busy);
    try {
      const result = await pbh(['site', 'build', '--db', busy, '--out', path.join(tmp, 'busy-site')]);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain(busy);
      expect(result.stderr).toMatch(/locked/);
      expect(result.stderr).toMatch(/Wait/);
      expect(result.stderr).toMatch(/copy/);
      expect(existsSync(path.join(tmp, 'busy-site', 'index.html'))).toBe(false);
    } finally {
      await writer.close();
    }
  });

  it('the site build itself exits with SITE_BUILD_LOCKED_EXIT when a writer holds the database', async () => {
    const busy = path.join(tmp, 'busy-during-build.duckdb');
    const writer = await openStore(busy);
    try {
      const result = await collect('npm', ['run', '--silent', 'build:site'], SITE_DIR, { PBH_SITE_DB: busy, PBH_SITE_OUT: path.join(tmp, 'busy-build') }, 240_000);
      expect(result.code, result.stderr).toBe(SITE_BUILD_LOCKED_EXIT);
      expect(result.stderr).toContain(busy);
      expect(result.stderr).toMatch(/is locked/);
    } finally {
      await writer.close();
    }
  });

  it('pbh site build turns that exit status into its locked message and exit 3 (site found through PBH_SITE_DIR)', async () => {
    const fakeSite = path.join(tmp, 'fake-site');
    mkdirSync(fakeSite, { recursive: true });
    const script = `node -e "process.exit(${SITE_BUILD_LOCKED_EXIT})"`;
    await writeFile(path.join(fakeSite, 'package.json'), JSON.stringify({ name: '@pbh/site', private: true, scripts: { 'build:site': script } }));
    const result = await pbh(['site', 'build', '--db', db, '--out', path.join(tmp, 'fake-out')], 60_000, { PBH_SITE_DIR: fakeSite });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/became locked during the build/);
    expect(result.stderr).toMatch(/build from a copy/);
  });

  it('PBH_SITE_DIR that is not the site project is a usage error naming it', async () => {
    const result = await pbh(['site', 'build', '--db', db], 60_000, { PBH_SITE_DIR: tmp });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`PBH_SITE_DIR is ${tmp}`);
  });

  it('a missing database says how to make one', async () => {
    const result = await pbh(['site', 'build', '--db', path.join(tmp, 'nope.duckdb'), '--out', path.join(tmp, 'nope-site')]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/No PBH database at .*nope\.duckdb.*pbh run/);
  });
});
