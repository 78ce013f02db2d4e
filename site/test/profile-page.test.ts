import type { SampleColumns } from '@pbh/core';
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import type { ProfileEntry, SiteData } from '../src/lib/data.js';
import { html, Html } from '../src/lib/html.js';
import { latencyEcdf } from '../src/lib/profile-view.js';
import { configsOfRun, runConfigHref, splitConfig } from '../src/lib/run-configs.js';

describe('html``: the Profile page written as strings', () => {
  it('escapes every interpolated string, in text and in double-quoted attributes', () => {
    const hostile = '<script>alert(1)</script> & "quoted"';
    expect(html`<a title="${hostile}">${hostile}</a>`.value).toBe(
      '<a title="&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;">&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;</a>',
    );
    const { document } = parseHTML(`<p>${html`<a title="${hostile}">${hostile}</a>`.value}</p>`);
    expect(document.querySelector('a')?.getAttribute('title')).toBe(hostile);
    expect(document.querySelector('a')?.textContent).toBe(hostile);
    expect(document.querySelectorAll('script')).toHaveLength(0);
  });

  it('keeps markup it made, joins lists, prints numbers and leaves out null, undefined and false', () => {
    const rows = [1, 2].map((n) => html`<td>${n}</td>`);
    expect(html`<tr>${rows}${null}${undefined}${false}${0}</tr>`.value).toBe('<tr><td>1</td><td>2</td>0</tr>');
    expect(html`${new Html('<b>kept</b>')} ${"it's"}`.value).toBe("<b>kept</b> it's");
  });
});

/**
 * Only what run-configs reads (run, id and config) is filled in: the grouping is the behaviour under test; the site
 * tests check the same pages built from real runs.
 */
function entry(runId: string, id: string, config: Record<string, unknown>): ProfileEntry {
  return { run_id: runId, profile_id: id, profile: { config } } as unknown as ProfileEntry;
}

describe("a run's config, once on its page", () => {
  const experiment = { name: 'e', models: [{ name: 'm', path: 'm.onnx' }] };
  const cell = (batch: number) => ({ model: { name: 'm' }, engine: { name: 'onnxruntime' }, batch_size: batch });

  it("splits a Profile's config into its cell and the run's part", () => {
    expect(splitConfig({ experiment, cell: cell(1) })).toEqual({ cell: cell(1), run: { experiment } });
    expect(splitConfig({ experiment })).toEqual({ cell: null, run: { experiment } });
  });

  it('keeps one copy per distinct run config, and links each Profile to its own', () => {
    const edited = { ...experiment, name: 'e2' };
    const profiles = [
      entry('r1', 'a', { experiment, cell: cell(1) }),
      entry('r1', 'b', { experiment, cell: cell(8) }),
      entry('r2', 'c', { experiment, cell: cell(1) }),
      entry('r2', 'd', { experiment: edited, cell: cell(8) }),
    ];
    // Only its profiles are read.
    const data = { profiles } as unknown as SiteData;
    expect(configsOfRun(data, 'r1').map((c) => [c.config, c.profiles.map((p) => p.profile_id)])).toEqual([[{ experiment }, ['a', 'b']]]);
    expect(configsOfRun(data, 'r2').map((c) => c.profiles.map((p) => p.profile_id))).toEqual([['c'], ['d']]);
    expect(configsOfRun(data, 'r3')).toEqual([]);
    expect(runConfigHref(data, profiles[1]!)).toBe('runs/r1.html#config');
    expect(runConfigHref(data, profiles[3]!)).toBe('runs/r2.html#config-2');
  });
});

describe('the ECDF as written: compact markup, the same chart', () => {
  const samples: SampleColumns = {
    session: [0, 0, 0, 0, 0, 0],
    batch: [0, 1, 2, 0, 1, 2],
    boundary: ['engine', 'engine', 'engine', 'predict', 'predict', 'predict'],
    ns: [1.0e6, 1.2e6, 1.5e6, 2.0e6, 2.5e6, 3.1e6],
  };
  const { document } = parseHTML(`<main>${latencyEcdf(samples, 'ecdf')!.svg}</main>`);
  const figure = document.querySelector('[data-chart="ecdf"]')!;

  it('has a legend entry per boundary in its fixed colour, with its count', () => {
    const swatches = [...figure.querySelectorAll('.pbh-plot-swatch')].map((s) => [s.textContent, s.getAttribute('style')]);
    expect(swatches).toEqual([['engine (n=3)', '--c:#4269d0'], ['predict (n=3)', '--c:#efb118']]);
  });

  it('draws one step line per boundary, its ticks and grid as one path a group, with a title, description and units', () => {
    const svg = figure.querySelector('svg')!;
    expect(figure.getAttribute('data-rows')).toBe('6');
    expect(svg.querySelector('title')?.textContent).toContain('ECDF');
    expect(svg.querySelector('desc')?.textContent).toContain('engine (n=3), predict (n=3)');
    expect(svg.textContent).toContain('Latency per batch (ms');
    const lines = [...svg.querySelectorAll('g[aria-label="line"] path')].map((p) => p.getAttribute('d') ?? '');
    expect(lines).toHaveLength(2);
    // A step-after line: one M, then only horizontal and vertical steps (absolute or relative), a riser to each next point.
    for (const d of lines) {
      expect(d).toMatch(/^M[-\d.]+,[-\d.]+(?:[HVhv]-?[\d.]+)+$/);
      expect(d.match(/[Vv]/g)).toHaveLength(2);
    }
    for (const group of ['y-axis tick', 'x-axis tick', 'y-grid']) {
      const paths = svg.querySelectorAll(`g[aria-label="${group}"] > *`);
      expect(paths, group).toHaveLength(1);
      expect(paths[0]!.getAttribute('d')!.match(/M/g)!.length, group).toBeGreaterThan(1);
    }
    expect(svg.getAttribute('style')).toBeNull();
  });
});
