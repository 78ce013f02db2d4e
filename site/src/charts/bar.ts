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

const LABEL_CHARS = 40;

/**
 * Horizontal bars, one per row in the given order, labels on the left (long ones cut, the full text in the tooltip).
 * Where the values span more than LOG_SPAN the axis is logarithmic, bars starting at the padded domain's floor: on
 * a linear axis 3.83 and 4,177 vanish beside 1,334,532. The value's text sits right of its bar, in the right margin's
 * room, dark enough to read (ink).
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
  const base = log ? scale.domain[0] : 0;
  const longestText = Math.max(...rows.map((b) => b.text.length));
  return renderChart({
    id: spec.id,
    title: spec.title,
    rows: rows.length,
    description: spec.description,
    plot: {
      height: 60 + rows.length * 24,
      marginBottom: 40,
      marginLeft: Math.min(280, 14 + longest * 6),
      marginRight: Math.max(60, 16 + longestText * 6),
      x: { label: `${spec.x.label}${percent ? ' (%)' : ''}${log ? ', log scale' : ''} →`, ...scale, grid: true },
      y: { label: null, domain: rows.map((b) => b.index), tickFormat: (i: number) => short(rows[i]?.label ?? '') },
      marks: [
        Plot.barX(rows, { x1: () => base, x2: value, y: 'index', fill: (b: Bar) => b.color ?? '#4269d0', title: (b: Bar) => `${b.label}: ${b.text}` }),
        Plot.text(rows, { x: value, y: 'index', text: 'text', dx: 4, textAnchor: 'start', fill: { value: (b: Bar) => (b.color ? ink(b.color) : '#222'), scale: null } }),
      ],
    },
  });
}
