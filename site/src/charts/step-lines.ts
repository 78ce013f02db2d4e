import { escapeText } from '../lib/escape.js';
import type { FrameScales } from './framed.js';
import { compactPath } from './render.js';

export interface StepLine {
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  stroke: string;
}

/**
 * Step-after lines (across to the next point's x, then up or down to it: Plot's curve 'step-after') in a framed
 * chart's pixels, as the markup Plot's line mark writes: one group, a path per line. The path data goes straight from
 * the scaled positions to compact steps (compactPath); Plot's line mark wrote them through d3-shape as M/L text that
 * roundGeometry then read back, two thirds of a Profile page's ECDF with Plot's axes kept. Points are drawn in order.
 */
export function stepAfterLines(lines: StepLine[], scales: FrameScales, strokeWidth: number): string {
  const paths = lines.map(({ x, y, stroke }) => {
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i < x.length; i++) {
      const [px, py] = [Math.round(scales.x(x[i]!) * 10), Math.round(scales.y(y[i]!) * 10)];
      if (!Number.isFinite(px) || !Number.isFinite(py)) continue;
      if (xs.length > 0) {
        xs.push(px);
        ys.push(ys[ys.length - 1]!);
      }
      xs.push(px);
      ys.push(py);
    }
    if (xs.length === 0) return '';
    // A single point closes on itself, as d3-shape draws it: a dot under the round cap.
    const d = xs.length === 1 ? `${compactPath(xs, ys)}Z` : compactPath(xs, ys);
    return `<path d="${d}" stroke="${escapeText(stroke)}"/>`;
  });
  return `<g stroke-linecap="round" stroke-linejoin="round" stroke-width="${strokeWidth}" fill="none" aria-label="line">${paths.join('')}</g>`;
}
