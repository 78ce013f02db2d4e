import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SampleColumns } from '@pbh/core';
import { afterAll, describe, expect, it } from 'vitest';

// The cache reads its folder from the environment when it loads: set it first, then load it.
const folder = mkdtempSync(path.join(os.tmpdir(), 'pbh-chart-cache-test-'));
process.env.PBH_SITE_CHART_CACHE = folder;
const { cachedChart } = await import('../src/charts/cache.js');
const { latencyEcdf } = await import('../src/lib/profile-view.js');

afterAll(() => rmSync(folder, { recursive: true, force: true }));

const draw = (text: string) => () => `<svg>${text}</svg>`;
const codeA = (x: number) => x + 1;
const codeB = (x: number) => x + 2;

describe('chart cache (content-addressed across builds)', () => {
  it('renders a chart once, then returns the stored markup for the same input and code', () => {
    let renders = 0;
    const render = () => {
      renders += 1;
      return `<svg>${renders}</svg>`;
    };
    expect(cachedChart({ rows: [1, 2] }, [codeA], render)).toBe('<svg>1</svg>');
    expect(cachedChart({ rows: [1, 2] }, [codeA], render)).toBe('<svg>1</svg>');
    expect(renders).toBe(1);
    expect(readdirSync(folder).filter((f) => f.endsWith('.svg'))).toHaveLength(1);
  });

  it('misses when the input data or the drawing code differ', () => {
    expect(cachedChart({ rows: [1, 3] }, [codeA], draw('other data'))).toBe('<svg>other data</svg>');
    expect(cachedChart({ rows: [1, 2] }, [codeB], draw('other code'))).toBe('<svg>other code</svg>');
  });

  it('draws a real ECDF once and returns the identical markup from the cache', () => {
    const samples = (): SampleColumns => ({ session: [0, 0, 0, 0], batch: [0, 1, 0, 1], boundary: ['engine', 'engine', 'predict', 'predict'], ns: [1e6, 2e6, 3e6, 4e6] });
    const before = new Set(readdirSync(folder));
    const first = latencyEcdf(samples(), 'ecdf');
    const stored = readdirSync(folder).filter((f) => !before.has(f));
    expect(stored).toHaveLength(1);
    expect(first?.svg).toContain('data-chart="ecdf"');
    expect(latencyEcdf(samples(), 'ecdf')?.svg).toBe(first?.svg);
    // What is returned is the stored file: overwrite it and the next call reads it, not Plot.
    writeFileSync(path.join(folder, stored[0]!), '<svg>from the cache</svg>');
    expect(latencyEcdf(samples(), 'ecdf')?.svg).toBe('<svg>from the cache</svg>');
  });
});
