/** How numbers read on the site. Downloads keep every digit; pages show what a person compares. */

export const DASH = '—';

/** One formatter for every whole number: `toLocaleString` builds one per call, ~40 µs, a second per 1,000 Profile pages. */
const WHOLE = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function fmtNum(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  const abs = Math.abs(value);
  if (abs >= 100) return WHOLE.format(Math.round(value));
  if (abs === 0) return '0';
  return String(Number(value.toPrecision(3)));
}

export function fmtPct(fraction: number | null | undefined, digits = 1): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return DASH;
  const pct = fraction * 100;
  return `${Math.abs(pct) < 0.1 && pct !== 0 ? pct.toPrecision(2) : pct.toFixed(digits)}%`;
}

/**
 * A Profile's fraction of the theoretical peak. Above 100% the peak is underestimated (a turbo clock above the one the
 * machine reports, a unit the flags do not show): the page says so and never presents the figure as a fact.
 */
export function fmtPeakFraction(fraction: number | null | undefined, digits = 1): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return DASH;
  return fraction > 1 ? `peak underestimated (${fmtPct(fraction, 0)})` : fmtPct(fraction, digits);
}

/** Signed relative change, e.g. +3.2% / -12%. */
export function fmtChange(relative: number | null | undefined): string {
  if (relative === null || relative === undefined || !Number.isFinite(relative)) return DASH;
  return `${relative >= 0 ? '+' : ''}${(relative * 100).toFixed(1)}%`;
}

export function fmtMiB(mib: number | null | undefined): string {
  return mib === null || mib === undefined ? DASH : `${fmtNum(mib)} MiB`;
}

export function fmtBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return DASH;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${fmtNum(value)} ${units[unit]}`;
}

/** FLOP/s with an SI prefix: 20.8 GFLOP/s. */
export function fmtFlops(flops: number | null | undefined): string {
  if (flops === null || flops === undefined || !Number.isFinite(flops)) return DASH;
  const prefixes: [number, string][] = [
    [1e15, 'P'],
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [size, prefix] of prefixes) if (Math.abs(flops) >= size) return `${fmtNum(flops / size)} ${prefix}FLOP/s`;
  return `${fmtNum(flops)} FLOP/s`;
}

export function fmtCount(value: number | null | undefined): string {
  if (value === null || value === undefined) return DASH;
  return WHOLE.format(Math.round(value));
}

/** 2026-11-30 15:10 UTC: the store keeps UTC, and so does the site, so pages read the same everywhere. */
export function fmtDate(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export function fmtDay(iso: string): string {
  return iso.slice(0, 10);
}
