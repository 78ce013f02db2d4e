import { makePalette, type Palette } from '../charts/palette.js';
import { engineSeries } from './comparisons.js';
import type { ProfileEntry } from './data.js';

export interface SiteSeries {
  /** A Profile's engine series, named over the whole site (so "openvino fp32" is the same series on every page). */
  name: (p: ProfileEntry) => string;
  palette: Palette;
}

const cache = new WeakMap<readonly ProfileEntry[], SiteSeries>();

/** The engine series and their colours and batch symbols, from every Profile the site holds. */
export function siteSeries(all: readonly ProfileEntry[]): SiteSeries {
  const seen = cache.get(all);
  if (seen) return seen;
  // A Profile that never ran has no executed precision: it must not make "onnxruntime" read "onnxruntime fp32" everywhere.
  const name = engineSeries(all.filter((p) => p.precisionLabel !== null));
  const made = { name, palette: makePalette(all.map(name), all.map((p) => p.batch_size)) };
  cache.set(all, made);
  return made;
}
