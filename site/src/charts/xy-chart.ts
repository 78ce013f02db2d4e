import { makeScale, type Scale, type ScaleOptions } from './scale.js';
import { colorAt, coord, escapeXml, svgFrame } from './svg.js';

export interface XYPoint {
  x: number;
  y: number;
  /** Error bar ends, drawn when both are present. */
  low?: number;
  high?: number;
  /** Extra words for the point's tooltip, e.g. the batch size it stands for. */
  note?: string;
  /** Drawn with a red ring: e.g. a change beyond run-to-run noise. */
  flagged?: boolean;
}

export interface XYSeries {
  name: string;
  points: XYPoint[];
  /** line: joined points; step: an ECDF-style staircase; dots: points only; linedots: both. */
  mark: 'line' | 'step' | 'dots' | 'linedots';
  color?: string;
}

export interface AxisSpec extends ScaleOptions {
  /** Axis title, with its unit, e.g. "Latency per batch (ms)". */
  label: string;
  /** Fixed tick values (e.g. the batch sizes measured) instead of computed ones. */
  ticks?: number[];
}

export interface XYChartSpec {
  id: string;
  title: string;
  /** The text alternative: what the chart shows, in words. */
  description: string;
  x: AxisSpec;
  y: AxisSpec;
  series: XYSeries[];
  width?: number;
  height?: number;
}

const MARGIN = { top: 12, right: 20, bottom: 44, left: 68 };

function valueText(value: number, axis: AxisSpec): string {
  if (axis.percent) return `${(value * 100).toPrecision(3)}%`;
  return Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : String(Number(value.toPrecision(3)));
}

function scaleFor(axis: AxisSpec, values: number[], range: [number, number]): Scale {
  const scale = makeScale(axis.ticks ? [...values, ...axis.ticks] : values, range, axis);
  if (axis.ticks) {
    scale.ticks = axis.ticks;
    scale.format = (value) => valueText(value, axis);
  }
  return scale;
}

function axes(x: Scale, y: Scale, spec: XYChartSpec, width: number, height: number): string {
  const left = MARGIN.left;
  const right = width - MARGIN.right;
  const top = MARGIN.top;
  const bottom = height - MARGIN.bottom;
  const parts: string[] = ['<g class="grid" stroke="#e3e3e3">'];
  for (const tick of y.ticks) parts.push(`<line x1="${left}" x2="${right}" y1="${coord(y(tick))}" y2="${coord(y(tick))}"/>`);
  parts.push('</g><g class="axis" fill="#444">');
  for (const tick of y.ticks) {
    parts.push(`<text x="${left - 6}" y="${coord(y(tick) + 4)}" text-anchor="end">${escapeXml(y.format(tick))}</text>`);
  }
  for (const tick of x.ticks) {
    const px = coord(x(tick));
    parts.push(`<line x1="${px}" x2="${px}" y1="${bottom}" y2="${bottom + 5}" stroke="#444"/>`);
    parts.push(`<text x="${px}" y="${bottom + 17}" text-anchor="middle">${escapeXml(x.format(tick))}</text>`);
  }
  parts.push(`<line x1="${left}" x2="${right}" y1="${bottom}" y2="${bottom}" stroke="#444"/>`);
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${bottom}" stroke="#444"/>`);
  parts.push(
    `<text x="${coord((left + right) / 2)}" y="${height - 6}" text-anchor="middle" font-weight="600">${escapeXml(spec.x.label)}</text>`,
  );
  parts.push(
    `<text transform="translate(14 ${coord((top + bottom) / 2)}) rotate(-90)" text-anchor="middle" font-weight="600">${escapeXml(spec.y.label)}</text>`,
  );
  parts.push('</g>');
  return parts.join('');
}

function seriesPath(series: XYSeries, x: Scale, y: Scale): string {
  const pts = series.points;
  if (pts.length === 0) return '';
  if (series.mark === 'step') {
    let d = `M${coord(x(pts[0]!.x))},${coord(y(0))}V${coord(y(pts[0]!.y))}`;
    for (let i = 1; i < pts.length; i++) d += `H${coord(x(pts[i]!.x))}V${coord(y(pts[i]!.y))}`;
    return d;
  }
  return pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${coord(x(p.x))},${coord(y(p.y))}`).join('');
}

/** A line/step/scatter chart with linear or log axes, error bars and flagged points, as an SVG string. */
export function xyChart(spec: XYChartSpec): string {
  const width = spec.width ?? 640;
  const height = spec.height ?? 300;
  const all = spec.series.flatMap((s) => s.points);
  const x = scaleFor(spec.x, all.map((p) => p.x), [MARGIN.left, width - MARGIN.right]);
  const y = scaleFor(
    spec.y,
    all.flatMap((p) => [p.y, ...(p.low !== undefined && p.high !== undefined ? [p.low, p.high] : [])]),
    [height - MARGIN.bottom, MARGIN.top],
  );
  const body: string[] = [axes(x, y, spec, width, height)];
  spec.series.forEach((series, index) => {
    const color = series.color ?? colorAt(index);
    body.push(`<g class="series" stroke="${color}" fill="${color}"><title>${escapeXml(series.name)}</title>`);
    for (const p of series.points) {
      if (p.low === undefined || p.high === undefined) continue;
      body.push(`<line x1="${coord(x(p.x))}" x2="${coord(x(p.x))}" y1="${coord(y(p.low))}" y2="${coord(y(p.high))}" stroke-width="1.5"/>`);
    }
    if (series.mark !== 'dots') body.push(`<path d="${seriesPath(series, x, y)}" fill="none" stroke-width="2"/>`);
    if (series.mark === 'dots' || series.mark === 'linedots') {
      for (const p of series.points) {
        const tip = `${series.name}: ${spec.x.label} ${valueText(p.x, spec.x)}, ${spec.y.label} ${valueText(p.y, spec.y)}${p.note ? ` (${p.note})` : ''}`;
        body.push(`<circle cx="${coord(x(p.x))}" cy="${coord(y(p.y))}" r="4" stroke="#fff"><title>${escapeXml(tip)}</title></circle>`);
      }
    }
    for (const p of series.points) {
      if (p.flagged) body.push(`<circle cx="${coord(x(p.x))}" cy="${coord(y(p.y))}" r="8" fill="none" stroke="#c0392b" stroke-width="2"/>`);
    }
    body.push('</g>');
  });
  return svgFrame(spec.id, width, height, spec.title, spec.description, body.join(''));
}
