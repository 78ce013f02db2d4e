import { linearScale, type ScaleOptions } from './scale.js';
import { colorAt, coord, escapeXml, svgFrame } from './svg.js';

export interface Bar {
  label: string;
  value: number;
  /** Shown at the bar's end; defaults to the axis' own formatting. */
  text?: string;
  color?: string;
}

export interface BarChartSpec {
  id: string;
  title: string;
  description: string;
  bars: Bar[];
  x: ScaleOptions & { label: string };
  width?: number;
  labelWidth?: number;
}

const ROW = 22;
const LABEL_CHARS = 30;

/** Horizontal bars, one per row, labels on the left (long labels cut, full text in a tooltip). */
export function barChart(spec: BarChartSpec): string {
  const width = spec.width ?? 640;
  const labelWidth = spec.labelWidth ?? 190;
  const textRoom = 70;
  const top = 6;
  const height = top + spec.bars.length * ROW + 40;
  const x = linearScale(
    spec.bars.map((b) => b.value),
    [labelWidth, width - textRoom],
    { zero: true, ...spec.x },
  );
  const body: string[] = ['<g class="grid" stroke="#e3e3e3">'];
  const axisY = top + spec.bars.length * ROW;
  for (const tick of x.ticks) body.push(`<line x1="${coord(x(tick))}" x2="${coord(x(tick))}" y1="${top}" y2="${axisY}"/>`);
  body.push('</g><g fill="#444">');
  for (const tick of x.ticks) {
    body.push(`<text x="${coord(x(tick))}" y="${axisY + 15}" text-anchor="middle">${escapeXml(x.format(tick))}</text>`);
  }
  body.push(
    `<text x="${coord((labelWidth + width - textRoom) / 2)}" y="${axisY + 34}" text-anchor="middle" font-weight="600">${escapeXml(spec.x.label)}</text></g>`,
  );
  spec.bars.forEach((bar, index) => {
    const y = top + index * ROW;
    const label = bar.label.length > LABEL_CHARS ? `${bar.label.slice(0, LABEL_CHARS - 1)}…` : bar.label;
    const end = x(Math.max(0, bar.value));
    const text = bar.text ?? x.format(bar.value);
    body.push(
      `<g><title>${escapeXml(`${bar.label}: ${text}`)}</title>` +
        `<text x="${labelWidth - 6}" y="${y + 15}" text-anchor="end" fill="#222">${escapeXml(label)}</text>` +
        `<rect x="${labelWidth}" y="${y + 3}" width="${coord(Math.max(1, end - labelWidth))}" height="${ROW - 6}" fill="${bar.color ?? colorAt(0)}"/>` +
        `<text x="${coord(end + 4)}" y="${y + 15}" fill="#222">${escapeXml(text)}</text></g>`,
    );
  });
  return svgFrame(spec.id, width, height, spec.title, spec.description, body.join(''));
}
