import type * as Plot from '@observablehq/plot';
import { escapeText } from '../lib/escape.js';
import { chartId, compactTicks, PLOT_CLASS, plotted, roundGeometry } from './render.js';

/**
 * A chart in two layers: its frame (axes, grid, labels) drawn by Observable Plot, and its marks drawn on the frame's
 * own scales (Plot's, as the frame's plot returns them). The frame depends only on the scales and the layout, so it
 * is drawn once per distinct frame and kept: on a Profile page's ECDF, Plot's axes were three quarters of the chart's
 * time, and a build draws one chart per Profile. The frame's options must fix every position scale's domain and all
 * four margins, so that a kept frame is the frame; framedChart says which is missing otherwise.
 */
export interface FramedChartSpec {
  /** Unique within the page: names the SVG's title and description for screen readers. */
  id: string;
  title: string;
  /** The text alternative: what the chart shows, with its numbers, in words. */
  description: string;
  /** How many data rows the marks draw: the browser tests compare it with what was drawn. */
  rows: number;
  /** Plot's options for everything but the marks. */
  frame: Plot.PlotOptions & { x: Plot.ScaleOptions; y: Plot.ScaleOptions };
  /** The marks' markup, in the frame's pixels: `scales` are Plot's x and y of the frame's plot. */
  marks: (scales: FrameScales) => string;
  /**
   * A colour legend written here instead of Plot's: one coloured box per entry drawn by site.css from `--c`, ~50 bytes
   * an entry where Plot's swatch is an SVG of ~130.
   */
  swatches: { label: string; color: string }[];
}

/** A frame's position scales: a value to its pixel on the chart. */
export interface FrameScales {
  x: (value: number) => number;
  y: (value: number) => number;
}

interface Frame {
  scales: FrameScales;
  /** The SVG element's attributes, `class` with the site's chart class. */
  attributes: string;
  /** The axes and grid as markup, compacted. */
  body: string;
}

/** Frames kept in this thread, oldest dropped first: 10,000 Profiles with latencies spread over four decades drew 793. */
const FRAMES_KEPT = 2048;
const frames = new Map<string, Frame>();

const MARGINS = ['marginTop', 'marginRight', 'marginBottom', 'marginLeft'] as const;

const EMPTY_TEXT = /<text [^>]*\/>/g;

/** The key a frame is kept under: its options as JSON, a tick formatter by its source (it closes over nothing). */
function frameKey(options: Plot.PlotOptions): string {
  return JSON.stringify(options, (_key, value: unknown) => (typeof value === 'function' ? String(value) : value));
}

function drawFrame(options: FramedChartSpec['frame']): Frame {
  const svg = plotted({ ...options, marks: [] });
  const [x, y] = [svg.scale('x'), svg.scale('y')];
  if (!x || !y) throw new Error('A framed chart\'s plot has no x or y scale: its frame must set both.');
  const attributes = svg
    .getAttributeNames()
    .map((name) => {
      const value = name === 'class' ? `${svg.getAttribute('class') ?? PLOT_CLASS} chart-svg` : (svg.getAttribute(name) ?? '');
      return `${name}="${escapeText(value)}"`;
    })
    .join(' ');
  // The plot area, as renderChart marks it (render.ts plotArea): the browser tests hold every mark to it.
  const area = [x.range, y.range].flatMap((r) => [Math.min(...(r as number[])), Math.max(...(r as number[]))]);
  const plot = `${area[0]},${area[2]},${area[1]},${area[3]}`;
  return {
    scales: { x: (value) => x.apply(value) as number, y: (value) => y.apply(value) as number },
    attributes: `${attributes} data-plot="${plot}"`,
    // A log axis leaves some ticks unlabelled (d3's log format keeps labels readable) as empty texts that draw nothing.
    body: compactTicks(roundGeometry(svg.innerHTML)).replace(EMPTY_TEXT, ''),
  };
}

function keptFrame(options: FramedChartSpec['frame']): Frame {
  const key = frameKey(options);
  let frame = frames.get(key);
  if (!frame) {
    frame = drawFrame(options);
    if (frames.size >= FRAMES_KEPT) frames.delete(frames.keys().next().value!);
    frames.set(key, frame);
  }
  return frame;
}

function checkFrame(spec: FramedChartSpec): void {
  const missing = [
    ...MARGINS.filter((margin) => spec.frame[margin] === undefined),
    ...(['x', 'y'] as const).filter((scale) => spec.frame[scale].domain === undefined).map((scale) => `${scale}.domain`),
  ];
  if (missing.length > 0) throw new Error(`Chart ${spec.id}: a framed chart's frame must set ${missing.join(', ')} (its marks are drawn apart from its axes).`);
}

/** The chart as an HTML string: Plot's figure structure, the legend above the SVG, with role="img", a title and a description. */
export function framedChart(spec: FramedChartSpec): string {
  checkFrame(spec);
  const id = chartId(spec.id);
  const frame = keptFrame(spec.frame);
  const swatches = spec.swatches
    .map(({ label, color }) => `<span class="${PLOT_CLASS}-swatch" style="--c:${escapeText(color)}">${escapeText(label)}</span>`)
    .join('');
  const labels = `<title id="${id}-t">${escapeText(spec.title)}</title><desc id="${id}-d">${escapeText(spec.description)}</desc>`;
  const svg = `<svg role="img" aria-labelledby="${id}-t ${id}-d" ${frame.attributes}>${labels}${frame.body}${spec.marks(frame.scales)}</svg>`;
  return `<figure class="${PLOT_CLASS}-figure" style="max-width:initial" data-chart="${id}" data-rows="${spec.rows}"><div class="${PLOT_CLASS}-swatches ${PLOT_CLASS}-swatches-wrap">${swatches}</div>${svg}</figure>`;
}
