import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseHTML } from 'linkedom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pbh, ROOT } from './cli.js';

/** Core's test fixture, loaded by path: a static import would pull core's sources into the site's typecheck. */
const FIXTURE = path.join(ROOT, 'packages', 'core', 'test', 'history', 'history-fixture.ts');

/** The site's History from a seeded 20-run series with a step at run 13 (index 12) and a failed run 18. */
describe('History change points on the built site', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pbh-site-steps-'));
  const db = path.join(dir, 'history.duckdb');
  const out = path.join(dir, 'site');

  beforeAll(async () => {
    const fixture = (await import(FIXTURE)) as { writeSteppedHistory: (file: string) => Promise<number[][]> };
    await fixture.writeSteppedHistory(db);
    const built = await pbh(['site', 'build', '--db', db, '--out', out], 300_000, { PBH_SITE_PAGE_CACHE: 'off' });
    expect(built.code, built.stderr).toBe(0);
  }, 320_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const page = (file: string): Document => parseHTML(readFileSync(path.join(out, file), 'utf8')).document;

  it('lists the latest change points first on the History page, with run, commit and interval', () => {
    const rows = [...page('history.html').querySelectorAll('#change-points tbody tr')];
    expect(rows.map((r) => r.getAttribute('data-kind'))).toEqual(['status', 'status', 'throughput']);
    const cells = (r: Element): string[] => [...r.querySelectorAll('td')].map((td) => td.textContent!.trim());
    expect(cells(rows[1]!)[2]).toMatch(/^ok → failed$/i);
    const step = cells(rows[2]!);
    expect(step[2]).toMatch(/^▼ slower ×0\.(79|8\d)\d$/);
    expect(step[3]).toMatch(/^\[0\.\d{3}, 0\.\d{3}\]$/);
    expect(step[7]).toBe('aaaa0011 → bbbb0012');
    expect(step[8]).toBe('1.30.0');
  });

  it('draws the step on the series chart and lists it under it', () => {
    const file = readdirSync(path.join(out, 'history')).find((f) => f.endsWith('.html'))!;
    const doc = page(`history/${file}`);
    const rows = [...doc.querySelectorAll('#series-change-points tbody tr')];
    expect(rows.map((r) => [r.getAttribute('data-kind'), r.getAttribute('data-index')])).toEqual([
      ['throughput', '13'],
      ['status', '18'],
      ['status', '19'],
    ]);
    const chart = doc.querySelector('svg[data-chart="history"]')!;
    expect(chart.querySelector('desc')!.textContent).toContain('1 change points in throughput');
    // One solid rule at the step and a dashed line for each of the two levels, drawn as annotations.
    expect(chart.querySelectorAll('.annotation [stroke="#6c3483"], [stroke="#6c3483"].annotation').length).toBeGreaterThan(0);
  });
});
