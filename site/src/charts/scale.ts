/** A position scale from data to pixels, with the ticks and labels its axis shows. */
export interface Scale {
  (value: number): number;
  domain: [number, number];
  ticks: number[];
  format: (value: number) => string;
}

export interface ScaleOptions {
  log?: boolean;
  /** Include 0 in a linear domain (bars, throughput). */
  zero?: boolean;
  /** Tick labels as percentages of 1. */
  percent?: boolean;
  min?: number;
  max?: number;
  tickCount?: number;
}

const E10 = Math.sqrt(50);
const E5 = Math.sqrt(10);
const E2 = Math.sqrt(2);

/** d3's tick step: a power of ten times 1, 2 or 5, close to span/count. */
export function tickStep(start: number, stop: number, count: number): number {
  const raw = Math.abs(stop - start) / Math.max(1, count);
  const power = Math.floor(Math.log10(raw));
  const error = raw / 10 ** power;
  const factor = error >= E10 ? 10 : error >= E5 ? 5 : error >= E2 ? 2 : 1;
  return factor * 10 ** power;
}

export function niceTicks(min: number, max: number, count: number): number[] {
  if (!(max > min)) return [min];
  const step = tickStep(min, max, count);
  const first = Math.ceil(min / step - 1e-9);
  const last = Math.floor(max / step + 1e-9);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

/** Compact tick labels: 1.5k, 20M, 0.05, 12%. */
export function formatTick(value: number, step: number, percent = false): string {
  if (percent) {
    const digits = Math.max(0, -Math.floor(Math.log10(step * 100) + 1e-9));
    return `${(value * 100).toFixed(Math.min(digits, 3))}%`;
  }
  const abs = Math.abs(value);
  for (const [size, suffix] of [
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ] as const) {
    if (abs >= size) return `${Number((value / size).toPrecision(6))}${suffix}`;
  }
  const digits = step > 0 && step < 1 ? Math.min(6, Math.ceil(-Math.log10(step) - 1e-9)) : 0;
  return value.toFixed(digits);
}

function paddedDomain(values: number[], options: ScaleOptions): [number, number] {
  const finite = values.filter((v) => Number.isFinite(v) && (!options.log || v > 0));
  let lo = options.min ?? (finite.length ? Math.min(...finite) : 0);
  let hi = options.max ?? (finite.length ? Math.max(...finite) : 1);
  if (options.zero && !options.log) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
  }
  if (lo === hi) {
    if (options.log) {
      lo /= 2;
      hi *= 2;
    } else {
      // One value: open the axis away from any fixed end (accuracy 100% with max 1 opens downwards).
      const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
      if (options.min === undefined && !(options.zero && lo >= 0)) lo -= pad;
      if (options.max === undefined || options.min !== undefined) hi = options.max ?? hi + pad;
      if (lo === hi) lo -= pad;
    }
  }
  return [lo, hi];
}

export function linearScale(values: number[], range: [number, number], options: ScaleOptions = {}): Scale {
  const [rawLo, rawHi] = paddedDomain(values, options);
  const count = options.tickCount ?? 5;
  const step = tickStep(rawLo, rawHi, count);
  // Extend to whole ticks so the axis ends on a labelled value.
  const lo = options.min ?? Math.floor(rawLo / step + 1e-9) * step;
  const hi = options.max ?? Math.ceil(rawHi / step - 1e-9) * step;
  const [r0, r1] = range;
  const scale = ((value: number) => r0 + ((value - lo) / (hi - lo || 1)) * (r1 - r0)) as Scale;
  scale.domain = [lo, hi];
  scale.ticks = niceTicks(lo, hi, count);
  scale.format = (value) => formatTick(value, step, options.percent);
  return scale;
}

export function logScale(values: number[], range: [number, number], options: ScaleOptions = {}): Scale {
  const [rawLo, rawHi] = paddedDomain(values, { ...options, log: true });
  // A little room either side of the data; whole decades would waste most of a narrow axis.
  const lo = options.min ?? rawLo / 1.15;
  const hi = options.max ?? rawHi * 1.15;
  const [r0, r1] = range;
  const span = Math.log10(hi) - Math.log10(lo) || 1;
  const scale = ((value: number) => r0 + ((Math.log10(Math.max(value, lo)) - Math.log10(lo)) / span) * (r1 - r0)) as Scale;
  scale.domain = [lo, hi];
  const multipliers = span <= 1.2 ? [1, 1.5, 2, 3, 5, 7] : span <= 2.5 ? [1, 2, 5] : span <= 4 ? [1, 3] : [1];
  const ticks: number[] = [];
  for (let exp = Math.floor(Math.log10(lo)); exp <= Math.ceil(Math.log10(hi)); exp++) {
    for (const m of multipliers) {
      const tick = Number((m * 10 ** exp).toPrecision(12));
      if (tick >= lo && tick <= hi) ticks.push(tick);
    }
  }
  scale.ticks = ticks;
  scale.format = (value) => formatTick(value, value / 10, options.percent);
  return scale;
}

export function makeScale(values: number[], range: [number, number], options: ScaleOptions = {}): Scale {
  return options.log ? logScale(values, range, options) : linearScale(values, range, options);
}
