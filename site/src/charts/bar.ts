import * as Plot from '@observablehq/plot';
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

/** Horizontal bars, one per row in the given order, labels on the left (long ones cut, the full text in the tooltip). */
export function barChart(spec: BarChartSpec): string {
  // Rows by position, not by label: two layers may share a name.
  const rows = spec.bars.map((bar, index) => ({ ...bar, index }));
  const short = (label: string): string => (label.length > LABEL_CHARS ? `${label.slice(0, LABEL_CHARS - 1)}…` : label);
  const longest = Math.max(...rows.map((b) => short(b.label).length));
  return renderChart({
    id: spec.id,
    title: spec.title,
    rows: rows.length,
    description: spec.description,
    plot: {
      height: 50 + rows.length * 24,
      marginLeft: Math.min(280, 14 + longest * 6),
      marginRight: 80,
      x: { label: `${spec.x.label} →`, grid: true, zero: true, ...(spec.x.percent ? { percent: true } : {}) },
      y: { label: null, domain: rows.map((b) => b.index), tickFormat: (i: number) => short(rows[i]?.label ?? '') },
      marks: [
        Plot.barX(rows, { x: 'value', y: 'index', fill: (b: Bar) => b.color ?? '#4269d0', title: (b: Bar) => `${b.label}: ${b.text}` }),
        Plot.text(rows, { x: 'value', y: 'index', text: 'text', dx: 4, textAnchor: 'start', fill: '#222' }),
      ],
    },
  });
}
