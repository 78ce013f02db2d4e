import * as Plot from '@observablehq/plot';
import { parseHTML } from 'linkedom';

/**
 * Every chart on the site is an Observable Plot figure rendered to static markup at build time, with linkedom as the
 * document (Plot only needs createElement/createElementNS and attribute setters; no browser runs at build time).
 * Text set through Plot reaches the markup through the DOM serialiser, so database strings are escaped there.
 */
const { document } = parseHTML('<!doctype html><html><head></head><body></body></html>');

export interface ChartSpec {
  /** Unique within the page: names the SVG's title and description for screen readers. */
  id: string;
  title: string;
  /** The text alternative: what the chart shows, with its numbers, in words. */
  description: string;
  /** How many data rows the chart draws as dots (or bars): the browser tests compare it with the marks drawn. */
  rows: number;
  plot: Plot.PlotOptions;
}

/**
 * Plot's class prefix, fixed so that the rules Plot would inline into every chart (two <style> blocks, ~1 KB) are in
 * public/site.css once, under this name.
 */
export const PLOT_CLASS = 'pbh-plot';

/** Plot's figure or SVG for `options`, 640 × 300 unless they say otherwise, without the <style> Plot inlines. */
export function plotted(options: Plot.PlotOptions): Element & Plot.Plot {
  const node = Plot.plot({
    width: 640,
    height: 300,
    // No inline style: the SVG's font size, background and overflow are .chart-svg's in site.css, once for every chart.
    ...options,
    className: PLOT_CLASS,
    // linkedom's Document implements the part of the DOM Plot calls; its type is not lib.dom's.
    document: document as unknown as Document,
  });
  for (const style of [...node.querySelectorAll('style')]) style.remove();
  labelLogTicks(node as unknown as Element & Plot.Plot, options);
  return node as unknown as Element & Plot.Plot;
}

/** An 11 px tick label's average character width and height, px, with a gap: labels closer than this would touch. */
const TICK_CHAR_PX = 6.6;
const TICK_LINE_PX = 13;

/** A tick label's position along its axis, from the translate() Plot writes on it. */
function tickPosition(text: Element, axis: 'x' | 'y'): number | null {
  const match = /translate\((-?[\d.]+),(-?[\d.]+)\)/.exec(text.getAttribute('transform') ?? '');
  return match ? Number(match[axis === 'x' ? 1 : 2]) : null;
}

/**
 * Plot formats a log axis's ticks with d3's log tickFormat, which blanks every label past the first few mantissas of a
 * decade whatever tickFormat says (a batch-8 tick had no label). Where the chart names its ticks and their format, each
 * axis group's labels are written from them (one text per tick inside the domain, in order, as Plot draws them):
 * every decade first, then the other ticks, each only where it clears the labels already written.
 */
function labelLogTicks(plot: Element & Plot.Plot, options: Plot.PlotOptions): void {
  for (const axis of ['x', 'y'] as const) {
    const scaleOptions = options[axis];
    if (scaleOptions?.type !== 'log' || !Array.isArray(scaleOptions.ticks) || typeof scaleOptions.tickFormat !== 'function') continue;
    const format = scaleOptions.tickFormat as (value: number) => string;
    const domain = (plot.scale(axis)?.domain ?? []) as number[];
    if (domain.length < 2) continue;
    const [lo, hi] = [Math.min(...domain), Math.max(...domain)];
    const ticks = (scaleOptions.ticks as number[]).filter((t) => t >= lo && t <= hi);
    for (const group of [...plot.querySelectorAll(`g[aria-label="${axis}-axis tick label"]`)]) {
      const texts = [...group.querySelectorAll('text')];
      if (texts.length !== ticks.length) continue;
      const labels = texts.map((text, i) => ({ text, label: format(ticks[i]!), at: tickPosition(text, axis), decade: Number.isInteger(Math.log10(ticks[i]!)) }));
      if (labels.some((l) => l.at === null)) continue;
      const kept: { from: number; to: number }[] = [];
      const extent = (l: (typeof labels)[number]): { from: number; to: number } => {
        const half = axis === 'x' ? (l.label.length * TICK_CHAR_PX) / 2 : TICK_LINE_PX / 2;
        return { from: l.at! - half, to: l.at! + half };
      };
      for (const pass of [true, false]) {
        for (const l of labels.filter((x) => x.decade === pass)) {
          const box = extent(l);
          if (kept.some((k) => box.from < k.to && k.from < box.to)) continue;
          kept.push(box);
          l.text.textContent = l.label;
        }
      }
    }
  }
}

/**
 * The plot area, "left,top,right,bottom" in the SVG's pixels, from Plot's own x and y scales (their ranges): the
 * browser tests hold every mark to it. An axis without a scale spans the whole SVG.
 */
export function plotArea(plot: Element & Plot.Plot): string {
  const extent = (name: 'x' | 'y', whole: number): [number, number] => {
    const range = plot.scale(name)?.range as number[] | undefined;
    return range && range.length >= 2 ? [Math.min(...range), Math.max(...range)] : [0, whole];
  };
  const svg = plot.tagName.toLowerCase() === 'svg' ? plot : plot.querySelector(':scope > svg');
  const height = Number(svg?.getAttribute('height') ?? 0) || 300;
  const [left, right] = extent('x', Number(svg?.getAttribute('width') ?? 0) || 640);
  const [top, bottom] = extent('y', height);
  return [left, top, right, bottom].map((v) => Math.round(v * 10) / 10).join(',');
}

/** A chart's id as it names elements and fragments: letters, digits, `_` and `-`. */
export const chartId = (id: string): string => id.replace(/[^A-Za-z0-9_-]/g, '_');

/** Plot's figure (legends and the SVG) or bare SVG as an HTML string, with role="img", a title and a description. */
export function renderChart(spec: ChartSpec): string {
  const node = plotted(spec.plot);
  const svg = node.tagName.toLowerCase() === 'svg' ? node : node.querySelector(':scope > svg');
  if (!svg) throw new Error(`Chart ${spec.id}: Observable Plot returned no SVG.`);
  const safeId = chartId(spec.id);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-labelledby', `${safeId}-t ${safeId}-d`);
  svg.setAttribute('class', `${svg.getAttribute('class') ?? ''} chart-svg`.trim());
  const title = document.createElementNS('http://www.w3.org/2000/svg', 'title');
  title.setAttribute('id', `${safeId}-t`);
  title.textContent = spec.title;
  const desc = document.createElementNS('http://www.w3.org/2000/svg', 'desc');
  desc.setAttribute('id', `${safeId}-d`);
  desc.textContent = spec.description;
  svg.insertBefore(desc, svg.firstChild);
  svg.insertBefore(title, desc);
  svg.setAttribute('data-plot', plotArea(node));
  node.setAttribute('data-chart', safeId);
  node.setAttribute('data-rows', String(spec.rows));
  return compactTicks(roundGeometry(node.outerHTML));
}

const GEOMETRY = / (d|x|y|x1|x2|y1|y2|cx|cy|r|width|height|transform|points)="([^"]*)"/g;
const LONG_DECIMAL = /-?\d+\.\d{2,}/g;
const POLYLINE = /^M[-\d.]+,[-\d.]+(?:L[-\d.]+,[-\d.]+)+$/;

/** A coordinate to a tenth of a pixel (`281.24058883843566` → `281.2`); one with at most one decimal as Plot wrote it. */
function tenth(n: string): string {
  const dot = n.indexOf('.');
  return dot >= 0 && n.length - dot > 2 ? String(Math.round(Number(n) * 10) / 10) : n;
}

/** A step between two coordinates in tenths of a pixel, as SVG writes it: `-.5`, `3.2`. */
function step(tenthsFrom: number, tenthsTo: number): string {
  const text = String((tenthsTo - tenthsFrom) / 10);
  if (text.startsWith('0.')) return text.slice(1);
  return text.startsWith('-0.') ? `-${text.slice(2)}` : text;
}

/** The shorter of an absolute step (`H57.5`) and a relative one (`h3.2`): the same point either way. */
const shorter = (absolute: string, relative: string): string => (relative.length < absolute.length ? relative : absolute);

/**
 * A polyline through points given in whole tenths of a pixel, as path data: H and V where a step is horizontal or
 * vertical (relative h and v where shorter), repeated points dropped, absolute L for a diagonal step. A step-after
 * ECDF line takes well under half the bytes Plot's M/L steps would.
 */
export function compactPath(xTenths: ArrayLike<number>, yTenths: ArrayLike<number>): string {
  let [x, y] = [xTenths[0]!, yTenths[0]!];
  let out = `M${x / 10},${y / 10}`;
  for (let i = 1; i < xTenths.length; i++) {
    const [px, py] = [xTenths[i]!, yTenths[i]!];
    if (px === x && py === y) continue;
    if (py === y) out += shorter(`H${px / 10}`, `h${step(x, px)}`);
    else if (px === x) out += shorter(`V${py / 10}`, `v${step(y, py)}`);
    else out += `L${px / 10},${py / 10}`;
    [x, y] = [px, py];
  }
  return out;
}

/** A line of absolute M/L steps as Plot writes it, read in one pass (a regular expression a point was slower), compacted. */
function compactLine(d: string): string {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let at = 0; at < d.length; ) {
    const comma = d.indexOf(',', at);
    let end = comma + 1;
    while (end < d.length && d[end] !== 'L') end++;
    xs.push(Math.round(Number(d.slice(at + 1, comma)) * 10));
    ys.push(Math.round(Number(d.slice(comma + 1, end)) * 10));
    at = end;
  }
  return compactPath(xs, ys);
}

/**
 * Plot writes coordinates with every float digit (`translate(281.24058883843566,308)`); a tenth of a pixel is all a
 * screen shows. Rounding the geometry attributes (never text, titles or data attributes) and compacting lines
 * (compactLine) takes well over half off a Profile page's chart, which is most of the page at 10,000 Profiles.
 */
export function roundGeometry(html: string): string {
  return html.replace(GEOMETRY, (all, name: string, value: string) => {
    if (name === 'd' && POLYLINE.test(value)) return ` d="${compactLine(value)}"`;
    return value.includes('.') ? ` ${name}="${value.replace(LONG_DECIMAL, tenth)}"` : all;
  });
}

const TICK = /<path d="M0,0([HV]-?[\d.]+)" transform="translate\((-?[\d.]+),(-?[\d.]+)\)" ?\/>/g;
const TICKS = /(<g [^>]*aria-label="[xy]-axis tick"[^>]*>)((?:<path d="M0,0[HV]-?[\d.]+" transform="translate\(-?[\d.]+,-?[\d.]+\)" ?\/>)+)<\/g>/g;
const GRID_LINE = /<line y2="(-?[\d.]+)" y1="\1" x2="(-?[\d.]+)" x1="(-?[\d.]+)" ?\/>|<line y2="(-?[\d.]+)" y1="(-?[\d.]+)" x2="(-?[\d.]+)" x1="\6" ?\/>/g;
const GRID = /(<g [^>]*aria-label="[xy]-grid"[^>]*>)((?:<line y2="-?[\d.]+" y1="-?[\d.]+" x2="-?[\d.]+" x1="-?[\d.]+" ?\/>)+)<\/g>/g;

/**
 * An axis' ticks (one translated path each) and its grid (one <line> each) as one path per group: the same strokes
 * in a third of the bytes. Only Plot's plain forms are rewritten; a group with anything else is left as it is.
 */
export function compactTicks(html: string): string {
  return html
    .replace(TICKS, (_all, open: string, ticks: string) =>
      `${open}<path d="${[...ticks.matchAll(TICK)].map(([, step, x, y]) => `M${x},${y}${step!.toLowerCase()}`).join('')}"/></g>`)
    .replace(GRID, (_all, open: string, lines: string) => {
      const d = [...lines.matchAll(GRID_LINE)].map(([, hy, hx2, hx1, vy2, vy1, vx]) =>
        hy !== undefined ? `M${hx1},${hy}H${hx2}` : `M${vx},${vy1}V${vy2}`);
      return d.length === (lines.match(/<line /g) ?? []).length ? `${open}<path fill="none" d="${d.join('')}"/></g>` : `${open}${lines}</g>`;
    });
}
