import * as Plot from '@observablehq/plot';
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import { framedChart, type FramedChartSpec } from '../src/charts/framed.js';
import { plotted, roundGeometry } from '../src/charts/render.js';
import { stepAfterLines, type StepLine } from '../src/charts/step-lines.js';

const MARGINS = { marginTop: 20, marginRight: 20, marginBottom: 30, marginLeft: 40 };

const LINES: StepLine[] = [
  { x: [0.11, 0.11, 0.13, 0.2, 0.35], y: [20, 40, 60, 80, 100], stroke: '#4269d0' },
  { x: [0.3, 0.42, 0.5], y: [33.3, 66.7, 100], stroke: '#efb118' },
  { x: [0.25], y: [100], stroke: '#ff725c' },
];

function spec(frame: FramedChartSpec['frame'], lines = LINES, names = ['a', 'b', 'c']): FramedChartSpec {
  return {
    id: 'chart',
    title: 'A <title> & more',
    description: 'What it shows',
    rows: lines.reduce((n, l) => n + l.x.length, 0),
    swatches: names.map((label, i) => ({ label, color: lines[i]!.stroke })),
    frame,
    marks: (scales) => stepAfterLines(lines, scales, 1.6),
  };
}

/** Plot's own step-after lines on the same frame, as the site writes any Plot line (roundGeometry). */
function plotLines(frame: FramedChartSpec['frame'], lines: StepLine[]): string[] {
  const rows = lines.flatMap((l, i) => Array.from(l.x, (x, k) => ({ x, y: l.y[k]!, s: String(i) })));
  const svg = plotted({
    ...frame,
    axis: null,
    x: { ...frame.x, grid: false },
    y: { ...frame.y, grid: false },
    color: { domain: lines.map((_, i) => String(i)), range: lines.map((l) => l.stroke) },
    marks: [Plot.line(rows, { x: 'x', y: 'y', stroke: 's', curve: 'step-after' })],
  });
  const { document } = parseHTML(`<div>${roundGeometry(svg.outerHTML)}</div>`);
  return [...document.querySelectorAll('g[aria-label="line"] path')].map((p) => p.getAttribute('d') ?? '');
}

function ourLines(markup: string): string[] {
  const { document } = parseHTML(`<div>${markup}</div>`);
  return [...document.querySelectorAll('svg > g[aria-label="line"] path')].map((p) => p.getAttribute('d') ?? '');
}

describe('a framed chart: Plot draws the frame once, the lines go on its scales', () => {
  const frames: [string, FramedChartSpec['frame']][] = [
    ['linear', { ...MARGINS, x: { type: 'linear', domain: [0.1, 0.5], ticks: 6 }, y: { domain: [0, 100], grid: true, ticks: 5 } }],
    ['log', { ...MARGINS, x: { type: 'log', domain: [0.1, 0.5], ticks: [0.1, 0.2, 0.5] }, y: { domain: [0, 100], grid: true, ticks: 5 } }],
  ];

  it.each(frames)('draws the path Plot\'s own step-after line draws, on a %s x axis (a lone point as a dot)', (_name, frame) => {
    const ours = ourLines(framedChart(spec(frame)));
    expect(ours).toHaveLength(3);
    expect(ours).toEqual(plotLines(frame, LINES));
    expect(ours[2]).toMatch(/^M[\d.]+,[\d.]+Z$/);
  });

  it('writes the same frame whether it was kept or drawn, whatever the series, and escapes its text', () => {
    const frame = frames[0]![1];
    const first = framedChart(spec(frame));
    expect(framedChart(spec(frame))).toBe(first);
    const other = framedChart(spec(frame, LINES, ['x', 'y', 'z']));
    const axes = (markup: string): string => markup.slice(markup.indexOf('</desc>'), markup.indexOf('<g stroke-linecap'));
    expect(axes(other)).toBe(axes(first));
    const { document } = parseHTML(`<div>${first}</div>`);
    expect(document.querySelector('svg > title')?.textContent).toBe('A <title> & more');
    expect(document.querySelector('svg')?.getAttribute('class')).toBe('pbh-plot chart-svg');
    expect(document.querySelectorAll('.pbh-plot-swatch')).toHaveLength(3);
    expect(document.querySelector('[data-chart="chart"]')?.getAttribute('data-rows')).toBe('9');
  });

  it('refuses a frame that leaves a margin or a domain to Plot, naming it', () => {
    const { marginLeft: _left, ...noLeft } = MARGINS;
    expect(() => framedChart(spec({ ...noLeft, x: { domain: [0, 1] }, y: { domain: [0, 100] } } as FramedChartSpec['frame']))).toThrow(/marginLeft/);
    expect(() => framedChart(spec({ ...MARGINS, x: { type: 'linear' }, y: { domain: [0, 100] } }))).toThrow(/x\.domain/);
  });
});
