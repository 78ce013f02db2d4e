import * as Plot from '@observablehq/plot';
import { paddedScale } from './axes.js';
import { ink } from './palette.js';
import { renderChart } from './render.js';

export interface Bar {
  label: string;
  value: number;
  /** Shown at the bar's end and in its tooltip. */
  text: string;
  color?: string;
}

export interface BarChartSpec {
  id: string;
  title: string;
  description: string;
  bars: Bar[];
  x: { label: string; percent?: boolean };
}

const LABEL_CHARS = 60;
/** An 11 px label's average character width, px, with room to spare: a label is never clipped by its margin. */
const CHAR_PX = 6.6;

/**
 * Horizontal bars from zero on a linear axis, one per row in the given order, labels on the left (only labels
 * longer than LABEL_CHARS are cut, the full text in the tooltip). Where the values span more than LOG_SPAN the axis is
 * logarithmic and each value is a dot, not a bar: a bar's length from an arbitrary floor would make 271 and 495 look
 * 4× apart. The value's text sits right of its mark, in the right margin's room, dark enough to read (ink).
 */
export function barChart(spec: BarChartSpec): string {
  // Rows by position, not by label: two layers may share a name.
  const rows = spec.bars.map((bar, index) => ({ ...bar, index }));
  const short = (label: string): string => (label.length > LABEL_CHARS ? `${label.slice(0, LABEL_CHARS - 1)}…` : label);
  const longest = Math.max(...rows.map((b) => short(b.label).length));
  const percent = spec.x.percent === true;
  const scale = paddedScale(rows.map((b) => (percent ? b.value * 100 : b.value)));
  const log = scale.type === 'log';
  const value = (b: Bar): number => (percent ? b.value * 100 : b.value);
  const longestText = Math.max(...rows.map((b) => b.text.length));
  return renderChart({
    id: spec.id,
    title: spec.title,
    rows: rows.length,
    description: spec.description,
    plot: {
      height: 60 + rows.length * 24,
      marginBottom: 40,
      marginLeft: Math.min(14 + LABEL_CHARS * CHAR_PX, 14 + longest * CHAR_PX),
      marginRight: Math.max(60, 16 + longestText * CHAR_PX),
      x: { label: `${spec.x.label}${percent ? ' (%)' : ''}${log ? ', log scale' : ''} →`, ...scale, grid: true },
      y: { label: null, domain: rows.map((b) => b.index), tickFormat: (i: number) => short(rows[i]?.label ?? '') },
      marks: [
        log
          ? Plot.dot(rows, { x: value, y: 'index', r: 5, fill: (b: Bar) => b.color ?? '#4269d0', title: (b: Bar) => `${b.label}: ${b.text}` })
          : Plot.barX(rows, { x1: () => 0, x2: value, y: 'index', fill: (b: Bar) => b.color ?? '#4269d0', title: (b: Bar) => `${b.label}: ${b.text}` }),
        Plot.text(rows, { x: value, y: 'index', text: 'text', dx: log ? 8 : 4, textAnchor: 'start', fill: { value: (b: Bar) => (b.color ? ink(b.color) : '#222'), scale: null } }),
      ],
    },
  });
}
