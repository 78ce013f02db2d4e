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
