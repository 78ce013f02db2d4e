/**
 * One colour per engine series and one symbol per batch size for the whole site: a colour means the same engine on
 * every chart, whatever else a chart holds. The built-in engines keep fixed colours; other series (labelled entries,
 * an entry at a second precision) take the rest of Observable's categorical palette in name order, over every series
 * the site shows, so they too are stable from page to page.
 */
const FIXED: Record<string, string> = {
  onnxruntime: '#4269d0',
  openvino: '#efb118',
  tvm: '#3ca951',
  tensorrt: '#ff725c',
};
const REST = ['#a463f2', '#ff8ab7', '#6cc5b0', '#97bbf5', '#9c6b4e', '#9498a0', '#1d1d1f'];
const SYMBOLS = ['circle', 'square', 'triangle', 'diamond', 'cross', 'star', 'wye', 'times'] as const;

export interface Palette {
  color(series: string): string;
  /** Plot's ordinal colour scale for the series a chart holds: its legend lists only those. */
  colorScale(series: readonly string[]): { domain: string[]; range: string[]; legend: true; label: string };
  symbol(batch: number): string;
  symbolScale(batches: readonly number[]): { domain: string[]; range: string[]; legend: true; label: string };
}

export const batchLabel = (batch: number): string => `batch ${batch}`;

export function makePalette(allSeries: Iterable<string>, allBatches: Iterable<number>): Palette {
  const others = [...new Set(allSeries)].filter((s) => !(s in FIXED)).sort((a, b) => a.localeCompare(b));
  const colors = new Map<string, string>(Object.entries(FIXED));
  others.forEach((s, i) => colors.set(s, REST[i % REST.length]!));
  const batches = [...new Set(allBatches)].sort((a, b) => a - b);
  const symbols = new Map(batches.map((b, i) => [b, SYMBOLS[i % SYMBOLS.length]!]));
  const color = (series: string): string => colors.get(series) ?? REST[REST.length - 1]!;
  const symbol = (batch: number): string => symbols.get(batch) ?? 'circle';
  return {
    color,
    symbol,
    colorScale: (series) => {
      const domain = [...new Set(series)].sort((a, b) => a.localeCompare(b));
      return { domain, range: domain.map(color), legend: true, label: 'Engine' };
    },
    symbolScale: (list) => {
      const domain = [...new Set(list)].sort((a, b) => a - b);
      return { domain: domain.map(batchLabel), range: domain.map(symbol), legend: true, label: 'Batch size' };
    },
  };
}

/** WCAG's relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const channel = (i: number): number => {
    const c = Number.parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

/** WCAG's contrast ratio of two #rrggbb colours. */
export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((m, n) => n - m) as [number, number];
  return (x + 0.05) / (y + 0.05);
}

/** Text needs 4.5:1 against the chart's white (WCAG AA); a series colour is for strokes and fills. */
export const TEXT_CONTRAST = 4.5;

/**
 * A series colour darkened, in steps of 5%, until text in it reads at TEXT_CONTRAST on white: OpenVINO's yellow is
 * 1.9:1 as it is. The hue stays, so a label still matches its line.
 */
export function ink(hex: string): string {
  if (!/^#[0-9a-f]{6}$/i.test(hex)) return '#1d1d1f';
  let [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  let out = hex;
  for (let i = 0; i < 40 && contrast(out, '#ffffff') < TEXT_CONTRAST; i++) {
    [r, g, b] = [r, g, b].map((c) => Math.round(c * 0.95)) as [number, number, number];
    out = `#${[r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('')}`;
  }
  return out;
}
