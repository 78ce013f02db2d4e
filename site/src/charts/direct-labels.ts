import * as Plot from '@observablehq/plot';
import type { AxisScale } from './axes.js';

/** The least vertical distance between two direct labels' baselines, px: an 11 px label's height and a gap. */
export const LABEL_GAP_PX = 14;

/**
 * Vertical positions for direct labels (one per line end, at the values `ys`) that keep at least `gap` pixels apart
 * and inside the plot's rows (`range`: [bottom, top] in pixels, as Plot's y range runs), as values of the y scale:
 * labels keep their order, move as little as they must, and are pushed back inside where the column overruns an
 * edge. The chart then draws its labels at these values, so a label sits beside its line or as near as room allows.
 */
export function spreadLabels(ys: readonly number[], scale: AxisScale, range: [number, number], gap = LABEL_GAP_PX): number[] {
  const y = Plot.scale({ y: { type: scale.type, domain: scale.domain, range } });
  const invert = y.invert;
  if (!invert) throw new Error(`spreadLabels: a ${scale.type} scale has no inverse`);
  const [bottom, top] = range;
  const order = ys.map((v, i) => ({ i, px: y.apply(v) as number })).sort((a, b) => a.px - b.px);
  // Top-down: each label at least `gap` below the one above it.
  for (let k = 0; k < order.length; k++) {
    const floor = k === 0 ? top : order[k - 1]!.px + gap;
    order[k]!.px = Math.max(order[k]!.px, floor);
  }
  // Bottom-up: the last one inside the plot, each above it `gap` higher at most, never above the top.
  for (let k = order.length - 1; k >= 0; k--) {
    const ceiling = k === order.length - 1 ? bottom : order[k + 1]!.px - gap;
    order[k]!.px = Math.max(top, Math.min(order[k]!.px, ceiling));
  }
  const out = new Array<number>(ys.length);
  for (const { i, px } of order) out[i] = invert(px) as number;
  return out;
}

/** How tall a plot must be for `labels` direct labels to fit one above the other between its margins. */
export const heightForLabels = (labels: number, marginTop: number, marginBottom: number, at: number): number =>
  Math.max(at, marginTop + marginBottom + (labels + 1) * LABEL_GAP_PX);
