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

const DEFAULT_STYLE = { fontSize: '11px', background: '#fff', overflow: 'visible' };

/**
 * Plot's class prefix, fixed so that the rules Plot would inline into every chart (two <style> blocks, ~1 KB) are in
 * public/site.css once, under this name.
 */
export const PLOT_CLASS = 'pbh-plot';

/** Plot's figure (legends and the SVG) or bare SVG as an HTML string, with role="img", a title and a description. */
export function renderChart(spec: ChartSpec): string {
  const node = Plot.plot({
    width: 640,
    height: 300,
    style: DEFAULT_STYLE,
    ...spec.plot,
    className: PLOT_CLASS,
    // linkedom's Document implements the part of the DOM Plot calls; its type is not lib.dom's.
    document: document as unknown as Document,
  });
  const svg = node.tagName.toLowerCase() === 'svg' ? node : node.querySelector(':scope > svg');
  if (!svg) throw new Error(`Chart ${spec.id}: Observable Plot returned no SVG.`);
  for (const style of [...node.querySelectorAll('style')]) style.remove();
  const safeId = spec.id.replace(/[^A-Za-z0-9_-]/g, '_');
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
  node.setAttribute('data-chart', safeId);
  node.setAttribute('data-rows', String(spec.rows));
  return compactPaths(roundGeometry(node.outerHTML));
}

const GEOMETRY = / (d|x|y|x1|x2|y1|y2|cx|cy|r|width|height|transform|points)="([^"]*)"/g;

/**
 * Plot writes coordinates with every float digit (`translate(281.24058883843566,308)`); a tenth of a pixel is all a
 * screen shows. Rounding the geometry attributes (never text, titles or data attributes) takes a third off a Profile
 * page's charts, which is most of the page at 10,000 Profiles.
 */
function roundGeometry(html: string): string {
  return html.replace(GEOMETRY, (_all, name: string, value: string) => ` ${name}="${value.replace(/-?\d+\.\d{2,}/g, (n) => String(Math.round(Number(n) * 10) / 10))}"`);
}

const POLYLINE = / d="(M[-\d.]+,[-\d.]+(?:L[-\d.]+,[-\d.]+)+)"/g;
const POINT = /([ML])([-\d.]+),([-\d.]+)/g;

/**
 * A line of absolute M/L steps (Plot's lines, the ECDF's step-after curve above all) rewritten with H and V where a
 * step is horizontal or vertical, repeated points dropped: the same path in about half the bytes.
 */
function compactPaths(html: string): string {
  return html.replace(POLYLINE, (_all, d: string) => {
    let out = '';
    let x = '';
    let y = '';
    for (const [, command, px, py] of d.matchAll(POINT)) {
      if (command === 'M') out += `M${px},${py}`;
      else if (px === x && py === y) continue;
      else if (py === y) out += `H${px}`;
      else if (px === x) out += `V${py}`;
      else out += `L${px},${py}`;
      x = px!;
      y = py!;
    }
    return ` d="${out}"`;
  });
}

/** The code every chart's markup passes through: part of a cached chart's key (cache.ts). */
export const RENDER_CODE = [renderChart, roundGeometry, compactPaths] as const;
