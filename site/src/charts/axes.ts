/**
 * What every chart's position axes share, so that every mark is inside its plot and every tick reads as a plain
 * number in the unit its label names:
 * - a time axis picks its unit (µs, ms or s) from the values it shows: ticks never carry an SI prefix ("20m" on an
 *   axis in ms), and the label names the unit;
 * - a scale is logarithmic where the values span more than LOG_SPAN (bars included), else linear from zero where
 *   the quantity starts there;
 * - the domain is padded beyond the extreme values, so no mark sits on the frame or beyond the last tick.
 */

/** Values whose largest is more than this many times the smallest go on a log scale. */
export const LOG_SPAN = 10;

/** How far a log domain reaches past the data (a factor), and a linear one (a share of its span). */
const LOG_PAD = 1.35;
const LINEAR_PAD = 0.08;

export type TimeUnit = 'µs' | 'ms' | 's';

export interface TimeAxis {
  unit: TimeUnit;
  /** Multiplies a value in ms into the axis' unit. */
  fromMs: number;
}

/** The unit a set of times in ms reads best in: their median in [1, 1000) of it where it can be. */
export function timeAxis(valuesMs: readonly number[]): TimeAxis {
  const finite = valuesMs.filter((v) => Number.isFinite(v) && v > 0).sort((a, b) => a - b);
  const median = finite.length === 0 ? 1 : finite[Math.floor(finite.length / 2)]!;
  if (median < 1) return { unit: 'µs', fromMs: 1000 };
  if (median >= 1000) return { unit: 's', fromMs: 1 / 1000 };
  return { unit: 'ms', fromMs: 1 };
}

/** Whether positive values span more than LOG_SPAN. */
export function spansDecade(values: readonly number[]): boolean {
  const positive = values.filter((v) => Number.isFinite(v) && v > 0);
  return positive.length > 1 && Math.max(...positive) / Math.min(...positive) > LOG_SPAN;
}

/** A tick's text: a plain number, thousands grouped, as many digits as the tick needs and no SI prefix. */
export function tickText(value: number): string {
  if (!Number.isFinite(value)) return '';
  const abs = Math.abs(value);
  if (abs === 0) return '0';
  if (abs >= 1) return value.toLocaleString('en-US', { maximumFractionDigits: abs >= 100 ? 0 : 2 });
  return String(Number(value.toPrecision(2)));
}

/** Log ticks: 1, 2, 5 of each decade within the domain where few decades show, else the decades alone. */
export function logTicks(lo: number, hi: number): number[] {
  const decades = Math.log10(hi / lo);
  const steps = decades <= 2.5 ? [1, 2, 5] : decades <= 5 ? [1, 3] : [1];
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const s of steps) {
      const t = s * 10 ** e;
      if (t >= lo * 0.999 && t <= hi * 1.001) ticks.push(Number(t.toPrecision(6)));
    }
  }
  return ticks;
}

export interface AxisScale {
  type: 'log' | 'linear';
  domain: [number, number];
  /** Linear: Plot rounds the padded domain out to whole ticks, so the last tick is past every value. */
  nice?: boolean;
  ticks?: number[];
  tickFormat: (v: number) => string;
}

/**
 * A padded scale over `values`: log where they span more than LOG_SPAN (or `log` says so), else linear, from zero
 * where `zero` (a throughput, a latency) and the values are not all far from it.
 */
export function paddedScale(values: readonly number[], { zero = true, log }: { zero?: boolean; log?: boolean } = {}): AxisScale {
  const finite = values.filter((v) => Number.isFinite(v));
  const useLog = log ?? spansDecade(finite);
  if (useLog) {
    const positive = finite.filter((v) => v > 0);
    const lo = Math.min(...positive) / LOG_PAD;
    const hi = Math.max(...positive) * LOG_PAD;
    const ticks = logTicks(lo, hi);
    return { type: 'log', domain: [lo, hi], ...(ticks.length >= 2 ? { ticks } : {}), tickFormat: tickText };
  }
  let lo = finite.length ? Math.min(...finite) : 0;
  let hi = finite.length ? Math.max(...finite) : 1;
  if (zero && lo >= 0) lo = 0;
  if (hi === lo) hi = lo === 0 ? 1 : lo * 1.5;
  const pad = (hi - lo) * LINEAR_PAD;
  return { type: 'linear', domain: [zero && lo === 0 ? 0 : lo - pad, hi + pad], nice: true, tickFormat: tickText };
}
