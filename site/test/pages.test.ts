import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { openStore, ratioInterval, runQuery, StoredProfileSchema, type StoredProfile } from '@pbh/core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fmtNum } from '../src/lib/format.js';
import { fmtRatio } from '../src/lib/lead.js';
import { noiseOf } from '../src/lib/noise.js';
import { BROWSER_ARGS, CHROMIUM, pbh, ROOT } from './cli.js';
import { addConstructedProfiles, runFixtures } from './pages-fixture.js';

/**
 * The pages half of the results site, read in Chromium as a reader would: the grouped leaderboard at 1400 x 900,
 * agreement and accuracy cost, the noisy mark, failures explained with their fix (engine and Profile pages), options
 * and facts as tables, no local path or stack on any page, the Machines and Reproduce pages, and the SQL console
 * (one duckdb-wasm build, ISO timestamps, long values cut). The database comes from real runs (pages-fixture.ts) plus
 * two Profiles this CPU cannot produce, derived from a real one: a bf16 execution and a worker crash.
 */

const SHOTS = path.join(ROOT, 'site', 'test', 'screenshots');
/** An absolute POSIX path in page text: not the tail of a relative one (`../work/x`) or of a URL. */
const ABSOLUTE_PATH = /(?<![\w.:/~-])\/(?:work|tmp|home|root|Users|var|opt|srv|mnt)\/[\w.@+-]+/;

let tmp: string;
let db: string;
let out: string;
let browser: Browser;
let page: Page;
let server: { stop: () => void; url: string };
let profiles: StoredProfile[];
const consoleErrors: string[] = [];

function serve(dir: string): Promise<{ stop: () => void; url: string }> {
  return new Promise((resolve, reject) => {
    void import('node:child_process').then(({ spawn }) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'packages', 'core', 'dist', 'cli', 'main.js'), 'site', 'serve', '--dir', dir, '--port', '0'], { cwd: ROOT });
      let text = '';
      const timer = setTimeout(() => reject(new Error(`pbh site serve did not start: ${text}`)), 20_000);
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        const match = / at (http:\/\/\S+) /.exec(text);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve({ stop: () => child.kill('SIGTERM'), url: match[1] });
        }
      });
    });
  });
}

const byEngineEntry = (entry: string): StoredProfile[] => profiles.filter((p) => (p.engine.label ?? p.engine.name) === entry);
/** Profile id to page name, read from the site's own downloads (data/profiles/SLUG.json.gz). */
const slugs = new Map<string, string>();
const slugOf = (id: string): string => slugs.get(id) ?? '';

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pbh-pages-test-'));
  db = path.join(tmp, 'results.duckdb');
  out = path.join(tmp, 'site');
  await runFixtures(tmp, db);
  await addConstructedProfiles(db);
  // Every page rendered by this build: the reference the kept pages are compared with (describe 'kept Profile pages').
  const build = await pbh(['site', 'build', '--db', db, '--out', out], 300_000, { PBH_SITE_PAGE_CACHE: 'off' });
  if (build.code !== 0) throw new Error(`pbh site build failed (${build.code}): ${build.stderr}`);
  profiles = readdirSync(path.join(out, 'data', 'profiles'))
    .filter((f) => f.endsWith('.json.gz'))
    .map((f) => {
      const profile = StoredProfileSchema.parse(JSON.parse(gunzipSync(readFileSync(path.join(out, 'data', 'profiles', f))).toString('utf8')));
      slugs.set(profile.profile_id, f.replace(/\.json\.gz$/, ''));
      return profile;
    });
  server = await serve(out);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get update && apt-get install -y chromium`);
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: BROWSER_ARGS });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(`${page.url()}: ${m.text()}`);
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  server?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('the leaderboard', () => {
  it('groups by model, batch, scenario and hardware across precisions, says the hardware once per group, ranks VALID rows within it, and fits 1400 px', async () => {
    await page.goto(`${server.url}index.html`);
    const groups = await page.locator('table#lb tbody').evaluateAll((bodies: HTMLTableSectionElement[]) =>
      bodies.map((b) => ({
        kind: b.dataset.kind ?? '',
        model: b.dataset.model ?? '',
        batch: b.dataset.batch ?? '',
        hardware: b.dataset.hardware ?? '',
        heading: b.rows[0]?.textContent ?? '',
        rows: [...b.rows].slice(1).map((r) => ({
          ok: !r.classList.contains('x') && !r.classList.contains('iv'),
          precision: r.dataset.precision ?? '',
          rank: r.cells[0]?.textContent ?? '',
          throughput: Number((r.cells[4]?.dataset.v ?? r.cells[4]?.textContent ?? '').replace(/,/g, '')),
          text: r.textContent ?? '',
          href: r.querySelector('a[href^="profiles/"]')?.getAttribute('href') ?? '',
        })),
      })),
    );
    expect(groups.length).toBeGreaterThan(2);
    const store = await openStore(db, { readOnly: true });
    let view: Map<string, { rank: number; hardware: string }>;
    try {
      const result = await runQuery(store, 'SELECT profile_id, rank_in_group, hardware FROM leaderboard');
      view = new Map(result.rows.map(([id, rank, hardware]) => [String(id), { rank: Number(rank), hardware: String(hardware) }]));
    } finally {
      await store.close();
    }
    for (const group of groups) {
      expect(group.heading).toContain(group.hardware);
      for (const row of group.rows) expect(row.text, 'the hardware is said in the heading only').not.toContain(group.hardware);
      // Ranked groups rank their VALID rows by throughput whatever the precision; the view ranks within each precision.
      if (group.kind !== 'ranked') {
        for (const row of group.rows) expect(row.rank, row.href).toBe('');
        continue;
      }
      group.rows.forEach((row, i) => {
        expect(row.rank).toBe(String(i + 1));
        if (i > 0) expect(row.throughput, row.href).toBeLessThanOrEqual(group.rows[i - 1]!.throughput);
        const id = profiles.find((p) => row.href === `profiles/${slugOf(p.profile_id)}.html`)?.profile_id ?? '';
        const before = group.rows.slice(0, i).filter((r) => r.precision === row.precision).length;
        expect(view.get(id), row.href).toEqual({ rank: before + 1, hardware: group.hardware });
      });
    }
    // digits_cnn at batch 1: two onnxruntime Profiles and OpenVINO's, ranked 1-3 in one group, the fastest named in its heading.
    const digits = groups.find((g) => g.kind === 'ranked' && g.model === 'digits_cnn' && g.batch === '1');
    expect(digits?.rows.filter((r) => r.precision === 'fp32').map((r) => r.rank)).toEqual(['1', '2', '3']);
    expect(digits?.heading).toMatch(/Fastest: \S+ \(fp32\) [\d,]+ samples\/s/);

    const fit = await page.evaluate(() => {
      const table = document.querySelector('table#lb')!;
      const last = document.querySelector('table#lb thead th:last-child')!.getBoundingClientRect();
      return { scroll: table.scrollWidth, room: table.parentElement!.clientWidth, lastRight: last.right, window: window.innerWidth };
    });
    expect(fit.scroll).toBeLessThanOrEqual(fit.room);
    expect(fit.lastRight).toBeLessThanOrEqual(fit.window);
    await page.screenshot({ path: path.join(SHOTS, 'pages-leaderboard-1400.png'), fullPage: true });
  });

  it('labels a random-weight model\'s score agreement, and gives trained models an accuracy cost against the reference engine', async () => {
    await page.goto(`${server.url}index.html`);
    const rows = await page.locator('table#lb tbody tr:not(.g):not(.x)').evaluateAll((trs: HTMLTableRowElement[]) =>
      trs.map((tr) => ({ model: (tr.parentElement as HTMLElement).dataset.model, entry: (tr.cells[1]?.dataset.v ?? tr.cells[1]?.textContent ?? '').trim(), score: tr.cells[7]?.textContent ?? '', scoreTitle: tr.cells[7]?.title ?? '', cost: tr.cells[8]?.textContent ?? '', costTitle: tr.cells[8]?.title ?? '' })),
    );
    const squeeze = rows.filter((r) => r.model === 'squeezenet');
    expect(squeeze.length).toBe(2);
    for (const row of squeeze) {
      // Agreement, with the samples it was counted on, and its cost: how many answers differ from the reference's.
      expect(row.score).toMatch(/^\d+\.\d% agreement of 4$/);
      expect(row.scoreTitle).toMatch(/agreement with onnxruntime's answers .*not accuracy/);
      expect(row.cost).toMatch(row.entry === 'onnxruntime' ? /^ref$/ : /^[−±]\d+\.\d pp \d of 4 differ$/);
    }
    const digits = rows.filter((r) => r.model === 'digits_cnn');
    // The reference is onnxruntime's newest ok Profile of the cell.
    const accuracy = (entry: string): number =>
      byEngineEntry(entry).filter((p) => p.status === 'ok' && p.model?.name === 'digits_cnn').sort((a, b) => a.created_at.localeCompare(b.created_at)).map((p) => p.scores.find((s) => s.metric === 'top1')!.value).at(-1)!;
    expect(digits.filter((r) => r.cost === 'ref')).toHaveLength(1);
    const openvino = digits.find((r) => r.entry === 'openvino')!;
    const points = (accuracy('openvino') - accuracy('onnxruntime')) * 100;
    // Points, then how many of the scored samples that difference is.
    expect(openvino.cost).toMatch(/^[−+±]\d+\.\d pp \d+ of 64$/);
    expect(Number(openvino.cost.split(' pp')[0]!.replace('−', '-').replace('±', ''))).toBeCloseTo(points, 1);
    expect(openvino.costTitle).toContain('onnxruntime');
    expect(await page.locator('table#lb thead th').allTextContents()).toEqual(expect.arrayContaining(['Accuracy / agreement', 'Accuracy cost']));
  });

  it('marks exactly the noisy Profiles, with why, on the leaderboard, the engine page and the Profile page', async () => {
    const expected = (p: StoredProfile) =>
      noiseOf({ throughput_mean: p.throughput?.mean ?? null, throughput_ci95_low: p.throughput?.ci95_low ?? null, throughput_ci95_high: p.throughput?.ci95_high ?? null, profile: p });
    for (const where of ['index.html', 'engines/onnxruntime.html']) {
      await page.goto(`${server.url}${where}`);
      const marks = await page.locator('table#lb tbody tr:not(.g):not(.x)').evaluateAll((trs: HTMLTableRowElement[]) =>
        trs.map((tr) => ({
          href: tr.querySelector('a[href^="../profiles/"], a[href^="profiles/"]')?.getAttribute('href') ?? '',
          // The mark links to the rule; why is written under it in the row, not in a tooltip.
          mark: tr.querySelector('a.noisy:not(.busy)') === null ? null : (tr.cells[4]?.querySelector('small.why')?.textContent ?? ''),
        })),
      );
      expect(marks.length).toBeGreaterThan(0);
      for (const { href, mark } of marks) {
        const profile = profiles.find((p) => href.endsWith(`profiles/${slugOf(p.profile_id)}.html`))!;
        const noise = expected(profile);
        expect(mark !== null, `${where} ${href}`).toBe(noise.noisy);
        if (mark !== null) expect(mark).toContain(noise.brief);
      }
    }
    const noisy = profiles.find((p) => p.status === 'ok' && expected(p).noisy);
    if (noisy) {
      await page.goto(`${server.url}profiles/${slugOf(noisy.profile_id)}.html`);
      const note = await page.locator('#noise').textContent();
      for (const reason of expected(noisy).reasons) expect(note).toContain(reason);
      // The rule, sessions under 100 ms among it, is the glossary's, linked from the note.
      expect(await page.locator('#noise a[href$="glossary.html#noisy"]').count()).toBe(1);
    }
  });
});

describe('the leaderboard\'s controls', () => {
  it('keeps its filters in the page\'s address and sorts latency lowest first', async () => {
    await page.goto(`${server.url}index.html?model=digits_cnn`);
    expect(await page.locator('select[data-key="model"]').inputValue()).toBe('digits_cnn');
    const models = await page.locator('table#lb tbody:not([hidden])').evaluateAll((bodies: HTMLElement[]) => [...new Set(bodies.map((b) => b.dataset.model))]);
    expect(models).toEqual(['digits_cnn']);
    await page.locator('select[data-key="batch"]').selectOption('1');
    expect(new URL(page.url()).search).toBe('?model=digits_cnn&batch=1');
    const p50 = page.locator('table#lb thead th').nth(5);
    await p50.locator('button').click();
    expect(await p50.getAttribute('aria-sort')).toBe('ascending');
  });
});

describe('the home page answers first', () => {
  it('shows, on the first screen at 1400 x 900, each group\'s fastest entry, its figure and its lead with the interval from the sessions', async () => {
    await page.goto(`${server.url}index.html`);
    const rows = await page.locator('table.answers tbody tr').evaluateAll((trs: HTMLTableRowElement[]) =>
      trs.map((tr) => ({
        model: tr.dataset.model ?? '',
        batch: Number(tr.dataset.batch),
        winner: tr.querySelector('td.winner a')?.getAttribute('href') ?? '',
        figure: tr.querySelector('td.figure')?.textContent ?? '',
        lead: tr.querySelector('td.lead')?.textContent ?? '',
        bottom: tr.getBoundingClientRect().bottom,
      })),
    );
    const ranked = profiles.filter((p) => p.status === 'ok' && (p.scenario?.validity ?? 'VALID') === 'VALID' && p.throughput !== null);
    const groups = new Map<string, StoredProfile[]>();
    for (const p of ranked) {
      const key = `${p.model_name}\u0000${p.workload.batch_size}`;
      groups.set(key, [...(groups.get(key) ?? []), p]);
    }
    expect(rows.length).toBe(groups.size);
    for (const row of rows) {
      // Each answer in the first screen: no scrolling to learn who won.
      expect(row.bottom, `${row.model} b${row.batch}`).toBeLessThanOrEqual(900);
      const members = [...groups.get(`${row.model}\u0000${row.batch}`)!].sort((a, b) => b.throughput!.mean - a.throughput!.mean);
      const [winner] = members;
      expect(row.winner).toBe(`profiles/${slugOf(winner!.profile_id)}.html`);
      expect(row.figure).toBe(fmtNum(winner!.throughput!.mean));
      const rival = members.find((p) => p.engine.name !== winner!.engine.name) ?? members[1];
      if (!rival) {
        expect(row.lead).toBe('the only engine in this group');
        continue;
      }
      // The paired rounds' ratio where the two ran in the same rounds, else the ratio and its 95% interval from the
      // two Profiles' per-session throughputs (core's ratioInterval).
      const pair = winner!.rounds?.pairs.find((x) => x.other_profile_id === rival.profile_id);
      const interval = pair ? { ratio: pair.ratio, low: pair.ci95_low, high: pair.ci95_high } : ratioInterval(rival.sessions.map((x) => x.throughput_sps), winner!.sessions.map((x) => x.throughput_sps))!;
      const text = `${fmtRatio(interval.ratio)}× [${fmtRatio(interval.low)}, ${fmtRatio(interval.high)}]`;
      const rivalName = rival.engine.label ?? rival.engine.name;
      if (interval.low <= 1 && interval.high >= 1) expect(row.lead).toMatch(new RegExp(`^tied on this machine with ${rivalName}.*: ${text.replace(/[[\].]/g, '\\$&')}$`));
      else expect(row.lead).toMatch(new RegExp(`^${text.replace(/[[\].]/g, '\\$&')} faster than ${rivalName}`));
    }
    expect(await page.locator('section.answers p.note a[href="glossary.html#lead"]').count()).toBe(1);
    await page.screenshot({ path: path.join(SHOTS, 'home-1400.png'), fullPage: false });
  });
});

describe('a phone, 390 px wide', () => {
  it('no page is wider than the screen, chart text is at least 11 px, and the home page answers on its first screen', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
    const phone = await context.newPage();
    try {
      const ok = profiles.find((p) => p.status === 'ok')!;
      const pages = ['index.html', `profiles/${slugOf(ok.profile_id)}.html`, 'sparsity.html', 'comparisons.html', 'models.html', 'models/digits_cnn.html', 'engines/openvino.html', 'history.html', 'machines.html', 'sql.html', 'glossary.html'];
      // Pages whose first figure (a chart, or a Profile's summary cards) must be on the first screen.
      const figureFirst = new Set([`profiles/${slugOf(ok.profile_id)}.html`, 'models/digits_cnn.html', 'engines/openvino.html']);
      for (const name of pages) {
        await phone.goto(`${server.url}${name}`);
        const measured = await phone.evaluate(() => {
          const sizes = [...document.querySelectorAll<SVGSVGElement>('svg.chart-svg')].flatMap((svg) => {
            const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
            return [...svg.querySelectorAll('text')].map((t) => Number.parseFloat(getComputedStyle(t).fontSize) * scale);
          });
          const figure = document.querySelector('figure.chart, .cards');
          return {
            width: document.documentElement.scrollWidth,
            smallest: sizes.length ? Math.min(...sizes) : null,
            nav: document.querySelector('header')!.getBoundingClientRect().height,
            figureTop: figure ? figure.getBoundingClientRect().top : null,
          };
        });
        if (figureFirst.has(name)) expect(measured.figureTop, name).toBeLessThan(844);
        expect(measured.width, name).toBeLessThanOrEqual(390);
        if (measured.smallest !== null) expect(measured.smallest, name).toBeGreaterThanOrEqual(11);
        // The nav is one line (it wrapped to four), however many pages it lists.
        expect(measured.nav, name).toBeLessThan(60);
      }
      await phone.goto(`${server.url}index.html`);
      const first = await phone.locator('table.answers tbody tr').first().boundingBox();
      expect(first!.y + first!.height).toBeLessThanOrEqual(844);
      await phone.screenshot({ path: path.join(SHOTS, 'home-390.png'), fullPage: false });
      // The leaderboard scrolls sideways under its rank and engine columns, which stay in view.
      const wrap = phone.locator('.table-wrap:has(table#lb)');
      await wrap.evaluate((el) => el.scrollTo({ left: 400 }));
      const engine = await phone.locator('table#lb tbody tr:not(.g) td:nth-child(2)').first().boundingBox();
      expect(engine!.x).toBeGreaterThanOrEqual(0);
      expect(engine!.x).toBeLessThan(100);
    } finally {
      await context.close();
    }
  });
});

describe('failures', () => {
  it('explains each cause in words with its fix on the engine page, grouped by cause', async () => {
    await page.goto(`${server.url}engines/openvino.html`);
    const sections = await page.locator('section.cause-group').evaluateAll((els) => els.map((e) => ({ heading: e.querySelector('h3')?.textContent ?? '', text: e.textContent ?? '' })));
    const section = (cause: string) => sections.find((s) => s.heading.startsWith(cause))?.text ?? '';
    expect(sections.map((s) => s.heading.replace(/\s*\(.*$/, ''))).toEqual(['Precision mismatch', 'Outputs differ from the reference', 'Worker crashed']);
    expect(section('Precision mismatch')).toMatch(/openvino-bf16 executed bf16 while onnxruntime, the reference, ran the model's own fp32/);
    expect(section('Precision mismatch')).toContain('precision: fp32');
    expect(section('Precision mismatch')).toContain('tolerance');
    expect(section('Outputs differ from the reference')).toMatch(/computed at fp32, as the reference did/);
    expect(section('Worker crashed')).toContain("worker process died");
    for (const s of sections) expect(s.text).toContain('What to change:');
    await page.screenshot({ path: path.join(SHOTS, 'pages-engine-failures.png'), fullPage: true });

    await page.goto(`${server.url}engines/tvm.html`);
    expect(await page.locator('section.cause-group h3').allTextContents()).toEqual([expect.stringMatching(/^Ran out of time/)]);
    expect(await page.locator('section.cause-group').textContent()).toContain('timeout_s');
  });

  it('explains a failure on its Profile page, keeps stderr and the stack in the JSON only, and collapses the config', async () => {
    const crash = profiles.find((p) => p.profile_id === 'crash-openvino')!;
    await page.goto(`${server.url}profiles/${slugOf(crash.profile_id)}.html`);
    const why = await page.locator('section.failure').textContent();
    expect(why).toContain('Worker crashed.');
    expect(why).toContain('openvino worker was killed by SIGSEGV');
    const body = (await page.locator('main').textContent()) ?? '';
    expect(body).not.toContain('last stderr of');
    expect(body).not.toContain('at WorkerClient');
    const json = await page.locator('section.failure a[download]').getAttribute('href');
    const downloaded = JSON.parse(gunzipSync(readFileSync(path.join(out, 'profiles', json!))).toString('utf8')) as StoredProfile;
    expect(downloaded.error_detail).toContain('at WorkerClient.crashedError');
    expect(await page.locator('h2:has-text("Full config") + details').getAttribute('open')).toBeNull();

    const bf16 = profiles.find((p) => p.profile_id === 'bf16-openvino')!;
    await page.goto(`${server.url}profiles/${slugOf(bf16.profile_id)}.html`);
    expect(await page.locator('section.failure').textContent()).toMatch(/Precision mismatch\. openvino-bf16 executed bf16 .* set precision: fp32 on the openvino-bf16 entry/s);
  });

  it('shows options and facts as tables, never raw JSON', async () => {
    // pages-ok's OpenVINO cell, the one run with an option set (pages-vision's OpenVINO runs on the defaults).
    const ok = byEngineEntry('openvino').find((p) => p.status === 'ok' && (p.engine.options as { hint?: string }).hint === 'latency')!;
    await page.goto(`${server.url}profiles/${slugOf(ok.profile_id)}.html`);
    const tables = await page.locator('dl.facts table.kv').evaluateAll((ts) => ts.map((t) => [...t.querySelectorAll('tr')].map((r) => [r.cells[0]?.textContent, r.cells[1]?.textContent])));
    expect(tables).toHaveLength(2);
    expect(tables[0]).toEqual([['hint', 'latency']]);
    expect(tables[1]).toEqual(expect.arrayContaining([['device', 'CPU'], ['requested.hint', 'latency']]));
    expect(await page.locator('dl.facts').first().textContent()).not.toContain('{"');
    await page.screenshot({ path: path.join(SHOTS, 'pages-profile-facts.png'), fullPage: true });
  });
});

describe('published pages', () => {
  it('carry no absolute local path: paths relative to the repository, or shortened to their last parts outside it', () => {
    const pages: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory() && entry.name !== 'data' && entry.name !== 'duckdb') walk(path.join(dir, entry.name));
        else if (entry.name.endsWith('.html')) pages.push(path.join(dir, entry.name));
      }
    };
    walk(out);
    expect(pages.length).toBeGreaterThan(10);
    for (const html of pages) {
      const text = readFileSync(html, 'utf8');
      expect(ABSOLUTE_PATH.exec(text)?.[0], html).toBeUndefined();
      expect(text, html).not.toContain(tmp);
    }
    // The vision config names its files relative to itself. Where that climbs to the filesystem's root
    // (a repository under /work, the config under /tmp: ../../../../work/...), such a base would reveal the whole path,
    // so its files read relative to the repository; where it climbs to a shared folder (both under /tmp), they read
    // as the config wrote them. Its own path and the database's read by their last two parts either way.
    const vision = profiles.find((p) => p.model?.name === 'squeezenet' && p.status === 'ok')!;
    const written = (vision.config as { cell: { model: { path: string } } }).cell.model.path;
    // The download says it as the page does: the config's relative path, or the repository's where that climbed to the root.
    expect(written).toMatch(/^(\.\.\/)+|^\.cache\/suite\//);
    const climbedTo = path.resolve(tmp, 'configs', 'nested', ...written.split('/').filter((part) => part === '..'));
    const shown = climbedTo === path.parse(climbedTo).root ? '.cache/suite/models/squeezenet.onnx' : written;
    const html = readFileSync(path.join(out, 'profiles', `${slugOf(vision.profile_id)}.html`), 'utf8');
    expect(html).toContain(`<code>${shown}</code>`);
    expect(html).toMatch(/npx pbh run …\/nested\/vision\.json --db …\/pbh-pages-test-\w+\/results\.duckdb --only [0-9a-f]+/);
  });

  it('carry no absolute local path in any file the build writes: downloads, Parquet and the console\'s database too', async () => {
    // Text of every file: .gz unpacked; Parquet and DuckDB files read through DuckDB, every text cell of every table.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const cells = async (from: string): Promise<string> => {
      const described = await connection.runAndReadAll(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${from}) WHERE column_type IN ('VARCHAR', 'JSON')`);
      const columns = described.getRows().map(([c]) => `"${String(c)}"::VARCHAR`);
      if (columns.length === 0) return '';
      const rows = await connection.runAndReadAll(`SELECT concat_ws(chr(10), ${columns.join(', ')}) FROM ${from}`);
      return rows.getRows().map(([v]) => String(v ?? '')).join('\n');
    };
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(path.join(dir, entry.name));
        else files.push(path.join(dir, entry.name));
      }
    };
    walk(out);
    let checked = 0;
    try {
      for (const file of files) {
        let text: string;
        if (file.endsWith('.parquet')) text = await cells(`read_parquet('${file}')`);
        else if (file.endsWith('.duckdb')) {
          await connection.run(`ATTACH '${file}' AS published (READ_ONLY)`);
          const tables = await connection.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE database_name = 'published'`);
          const parts: string[] = [];
          for (const [t] of tables.getRows()) parts.push(await cells(`published."${String(t)}"`));
          await connection.run('DETACH published');
          text = parts.join('\n');
        } else text = (file.endsWith('.gz') ? gunzipSync(readFileSync(file)) : readFileSync(file)).toString('latin1');
        const rel = path.relative(out, file);
        // Where the repository, the database and the configs are on this machine, and the home folder.
        for (const local of [ROOT, tmp, ...(os.homedir().length > 1 ? [`${os.homedir()}/`] : [])]) expect(text.includes(local), `${rel} holds ${local}`).toBe(false);
        // Vendored files (duckdb-wasm's emscripten file system names /tmp and /home) are checked for this machine's paths only.
        if (!rel.startsWith('duckdb')) expect(ABSOLUTE_PATH.exec(text)?.[0], rel).toBeUndefined();
        checked++;
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
    expect(files.some((f) => f.endsWith('profiles.parquet')) && files.some((f) => f.endsWith('pbh.duckdb'))).toBe(true);
    expect(checked).toBe(files.length);
  });

  it('has a Machines page with every system, its CPU, flags, memory, OS, runtimes and which Profiles', async () => {
    await page.goto(`${server.url}machines.html`);
    const machines = await page.locator('section.machine').evaluateAll((els) => els.map((e) => ({ id: e.id, text: e.textContent ?? '', counted: [...e.querySelectorAll<HTMLTableRowElement>('table.num tbody tr')].reduce((n, r) => n + Number(r.cells[2]?.textContent) + Number(r.cells[3]?.textContent), 0) })));
    expect(machines).toHaveLength(1);
    const system = profiles[0]!.system;
    const machine = machines[0]!;
    for (const fact of [system.cpu_model, `${system.cpu_cores} logical cores`, system.os, system.kernel, 'onnxruntime', 'openvino', 'tvm', 'Key CPU flags']) expect(machine.text).toContain(fact);
    expect(machine.counted).toBe(profiles.length);
    // A Profile page links to its machine.
    await page.goto(`${server.url}profiles/${slugOf(profiles[0]!.profile_id)}.html`);
    expect(await page.locator('a[href*="machines.html#"]').getAttribute('href')).toBe(`../machines.html#${machine.id}`);
    await page.screenshot({ path: path.join(SHOTS, 'pages-machines.png'), fullPage: true });
  });

  it('has a Reproduce page: how to get the bundled models and data, the commands, and every run', async () => {
    await page.goto(`${server.url}reproduce.html`);
    const text = (await page.locator('main').textContent()) ?? '';
    for (const command of ['npm run demo', 'npm run generate', 'pbh run CONFIG --db results/pbh.duckdb --only CELL_KEY', 'pbh site build']) expect(text).toContain(command);
    expect(await page.locator('main table tbody tr').count()).toBe(4);
    expect(text).toMatch(/pbh run .* --only [0-9a-f]+/);
    expect(await page.locator('header nav a', { hasText: 'Reproduce' }).count()).toBe(1);
  });
});

describe('the SQL console', () => {
  it('loads one duckdb-wasm build, prints timestamps as ISO, cuts long values, and agrees with the page on the leaderboard', async () => {
    const loaded: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/duckdb/')) loaded.push(path.basename(new URL(r.url()).pathname));
    });
    await page.goto(`${server.url}sql.html`);
    await expect.poll(() => page.locator('#sql-run').isEnabled(), { timeout: 60_000 }).toBe(true);
    // DuckDB loads with the first query, not with the page.
    expect(loaded).toEqual([]);
    expect(readdirSync(path.join(out, 'duckdb')).sort()).toEqual(['duckdb-browser-eh.worker.js', 'duckdb-eh.wasm']);

    const query = async (sql: string): Promise<void> => {
      await page.locator('#sql-input').fill(sql);
      await page.locator('#sql-run').click();
      await expect.poll(() => page.locator('#sql-status').textContent(), { timeout: 60_000 }).toMatch(/^[\d,]+ rows? /);
    };
    await query("SELECT created_at, (SELECT count(*) FROM leaderboard) AS ranked FROM profiles ORDER BY created_at LIMIT 1");
    expect(loaded.sort()).toEqual(['duckdb-browser-eh.worker.js', 'duckdb-eh.wasm']);
    expect(await page.locator('#sql-status').textContent()).toMatch(/^1 row in /);
    const [created, ranked] = await page.locator('#sql-result td').allTextContents();
    expect(created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const ok = profiles.filter((p) => p.status === 'ok').length;
    expect(Number(ranked)).toBe(ok);
    expect(await page.locator('main').textContent()).toContain(`leaderboard holds the ${ok} ok Profiles only`);

    await query('SELECT config FROM runs LIMIT 1');
    const cell = page.locator('#sql-result td').first();
    expect((await cell.boundingBox())!.height).toBeLessThan(60);
    await cell.locator('button.expand').click();
    expect(((await cell.locator('span').textContent()) ?? '').length).toBeGreaterThan(200);
    await page.screenshot({ path: path.join(SHOTS, 'pages-sql.png'), fullPage: false });

    // A float shows as stored, not as its binary expansion (0.2011149, not 0.20111489999999943).
    await query('SELECT 0.20111489999999943::DOUBLE AS x');
    expect(await page.locator('#sql-result td').allTextContents()).toEqual(['0.2011149']);
    expect(consoleErrors).toEqual([]);
  });

  it('answers its first count(*) after at most 15 MB on the wire: DuckDB compressed, the database read in ranges', async () => {
    // A fresh context: nothing cached. Every response's bytes as received (compressed where it was), the worker's too.
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const fresh = await context.newPage();
    const sizes: Promise<number>[] = [];
    const database: string[] = [];
    fresh.on('requestfinished', (request) => {
      sizes.push(request.sizes().then((s) => s.responseBodySize + s.responseHeadersSize));
      if (request.url().endsWith('/data/pbh.duckdb')) database.push(request.headers().range ?? 'whole file');
    });
    try {
      await fresh.goto(`${server.url}sql.html`);
      await fresh.locator('#sql-input').fill('SELECT count(*) FROM profiles');
      await fresh.locator('#sql-run').click();
      await expect.poll(() => fresh.locator('#sql-status').textContent(), { timeout: 60_000 }).toMatch(/^1 row in /);
      expect(await fresh.locator('#sql-result td').allTextContents()).toEqual([String(profiles.length)]);
      const bytes = (await Promise.all(sizes)).reduce((sum, n) => sum + n, 0);
      expect(bytes).toBeLessThanOrEqual(15e6);
      expect(database.length).toBeGreaterThan(0);
      for (const range of database) expect(range).toMatch(/^bytes=\d+-\d*$/);
    } finally {
      await context.close();
    }
  });
});

describe('kept Profile pages', () => {
  /** Each Profile page and each Profile's JSON (unzipped) of a built site, by file name. */
  const profileFiles = (site: string): Map<string, string> =>
    new Map([
      ...readdirSync(path.join(site, 'profiles')).map((f): [string, string] => [`profiles/${f}`, readFileSync(path.join(site, 'profiles', f), 'utf8')]),
      ...readdirSync(path.join(site, 'data', 'profiles')).map((f): [string, string] => [
        `data/profiles/${f}`,
        gunzipSync(readFileSync(path.join(site, 'data', 'profiles', f))).toString('utf8'),
      ]),
    ]);

  it('a rebuild links every unchanged Profile page and download in from the cache, the same bytes a fresh render writes', async () => {
    const cache = path.join(tmp, 'page-cache');
    const fresh = profileFiles(out);
    const first = await pbh(['site', 'build', '--db', db, '--out', path.join(tmp, 'site-kept-1')], 300_000, { PBH_SITE_PAGE_CACHE: cache });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`linked 0 kept Profile pages in and rendered ${profiles.length} new ones`);
    const second = await pbh(['site', 'build', '--db', db, '--out', path.join(tmp, 'site-kept-2')], 300_000, { PBH_SITE_PAGE_CACHE: cache });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(`linked ${profiles.length} kept Profile pages in and rendered 0 new ones`);
    expect(profileFiles(path.join(tmp, 'site-kept-1'))).toEqual(fresh);
    expect(profileFiles(path.join(tmp, 'site-kept-2'))).toEqual(fresh);
    // The cache holds this site's pages and downloads and nothing else.
    expect(readdirSync(cache)).toHaveLength(2 * profiles.length);
  }, 600_000);
});
