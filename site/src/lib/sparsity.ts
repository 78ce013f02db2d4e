import { scoreKind } from './accuracy.js';
import type { ProfileEntry } from './data.js';

/**
 * Sparsity as the study reads it: each current Profile placed by its model's measured weight sparsity, with its
 * pruning kind (dense, unstructured, or one N:M pattern), its method (obc, magnitude) and its dense base model, so that
 * lines join variants of one model and one kind only, and "relative to dense" divides by that model's dense Profile on
 * the same engine series, batch size, scenario, device and hardware.
 */

export type KindLabel = 'dense' | 'unstructured' | `${number}:${number}`;

export interface SparsityPoint {
  profile: ProfileEntry;
  /** The dense model this one was pruned from (itself when dense). */
  base: string;
  kind: KindLabel;
  method: string;
  target: number | null;
  actual: number;
  nmHolds: boolean | null;
  throughput: number;
  accuracy: number | null;
  samplesScored: number;
  /** The base model's Profile in the same cell (engine series, batch, scenario, device, hardware); null when none ran. */
  dense: ProfileEntry | null;
  /** throughput / the dense Profile's; accuracy / the dense Profile's. */
  relThroughput: number | null;
  relAccuracy: number | null;
}

/** The model's sparsity facts; a Profile that never read its model has none and counts as dense at its measured level. */
function factsOf(p: ProfileEntry): { actual: number; target: number | null; kind: string; n: number | null; m: number | null; nmHolds: boolean | null; method: string | null } {
  const s = p.profile.model?.sparsity;
  if (!s) return { actual: p.sparsity_actual ?? 0, target: null, kind: p.sparsity_kind ?? 'dense', n: null, m: null, nmHolds: null, method: null };
  return { actual: s.actual, target: s.target, kind: s.kind, n: s.n, m: s.m, nmHolds: s.nm_pattern_holds, method: s.method };
}

/** What the study writes where no file recorded how its zeros were made (the base suite's variants declare none). */
export const METHOD_NOT_RECORDED = 'method not recorded';

/**
 * How each model's zeros were made, from metadata: its own (pbh prune's pbh.optimization), else that of the pruned file
 * it was made from, the model whose name is the longest prefix of its name (pbh quantize names an INT8 copy of a
 * pruned file <pruned>_<method>_int8 and its metadata keeps no pruning method). Null where no file recorded one.
 */
export function pruningMethods(profiles: readonly ProfileEntry[]): Map<string, string | null> {
  const recorded = new Map<string, string>();
  for (const p of profiles) {
    const method = p.profile.model?.sparsity?.method;
    if (method) recorded.set(p.model_name, method);
  }
  const out = new Map<string, string | null>();
  for (const p of profiles) {
    if (out.has(p.model_name)) continue;
    const source = [...recorded.keys()].filter((name) => p.model_name.startsWith(name)).sort((a, b) => b.length - a.length)[0];
    out.set(p.model_name, source === undefined ? null : recorded.get(source)!);
  }
  return out;
}

function kindOf(p: ProfileEntry): KindLabel {
  const s = factsOf(p);
  if (s.kind === 'n_m' && s.n !== null && s.m !== null) return `${s.n}:${s.m}`;
  if (s.kind === 'n_m') return 'unstructured';
  return s.kind === 'dense' || s.actual === 0 ? 'dense' : 'unstructured';
}

/**
 * The dense model a variant was pruned from, among the dense models measured on the same dataset: the one whose name
 * is the longest prefix of the variant's (pbh prune names variants <model>_<method>_<kind>), else the only dense model
 * of its family; a variant with neither is its own base (it is drawn, but has nothing to be relative to).
 */
export function baseModels(profiles: readonly ProfileEntry[]): Map<string, string> {
  const dense = new Map<string, ProfileEntry>();
  for (const p of profiles) if (kindOf(p) === 'dense') dense.set(`${p.dataset_name}\u0000${p.model_name}`, p);
  const denseList = [...dense.values()];
  const out = new Map<string, string>();
  for (const p of profiles) {
    if (out.has(p.model_name)) continue;
    if (kindOf(p) === 'dense') {
      out.set(p.model_name, p.model_name);
      continue;
    }
    const sameData = denseList.filter((d) => d.dataset_name === p.dataset_name);
    const prefixed = sameData
      .filter((d) => p.model_name.startsWith(d.model_name))
      .sort((a, b) => b.model_name.length - a.model_name.length)[0];
    const family = new Set(sameData.filter((d) => d.model_family !== null && d.model_family === p.model_family).map((d) => d.model_name));
    out.set(p.model_name, prefixed?.model_name ?? (family.size === 1 ? [...family][0]! : p.model_name));
  }
  return out;
}

const cellKey = (p: ProfileEntry, series: (p: ProfileEntry) => string, model: string): string =>
  [model, series(p), p.batch_size, p.scenario, p.engine_device, p.hardware].join('\u0000');

/** Current ok Profiles as sparsity points (those with a throughput). */
export function sparsityPoints(current: readonly ProfileEntry[], series: (p: ProfileEntry) => string): SparsityPoint[] {
  const bases = baseModels(current);
  const methods = pruningMethods(current);
  const byCell = new Map(current.map((p) => [cellKey(p, series, p.model_name), p]));
  return current
    .filter((p) => p.throughput_mean !== null)
    .map((p) => {
      const base = bases.get(p.model_name) ?? p.model_name;
      const s = factsOf(p);
      const kind = kindOf(p);
      const dense = base === p.model_name && kind !== 'dense' ? null : byCell.get(cellKey(p, series, base)) ?? null;
      const throughput = p.throughput_mean ?? 0;
      const denseThroughput = dense?.throughput_mean ?? null;
      // Agreement with the reference engine (random weights) is not accuracy: no accuracy point, no accuracy ratio.
      const accuracy = scoreKind(p) === 'accuracy' ? p.accuracy : null;
      const denseAccuracy = dense && scoreKind(dense) === 'accuracy' ? dense.accuracy : null;
      return {
        profile: p,
        base,
        kind,
        method: kind === 'dense' ? 'dense' : (methods.get(p.model_name) ?? METHOD_NOT_RECORDED),
        target: s.target,
        actual: s.actual,
        nmHolds: s.nmHolds,
        throughput,
        accuracy,
        samplesScored: p.profile.workload.samples_scored,
        dense,
        relThroughput: denseThroughput ? throughput / denseThroughput : null,
        relAccuracy: denseAccuracy && accuracy !== null ? accuracy / denseAccuracy : null,
      };
    });
}

export interface Table1Row {
  base: string;
  model: string;
  kind: KindLabel;
  method: string;
  target: number | null;
  actual: number;
  nmHolds: boolean | null;
  parameters: number | null;
}

/** Table 1 of the paper: target vs measured sparsity, one row per model, grouped by base model then kind. */
export function table1(points: readonly SparsityPoint[]): Table1Row[] {
  const rows = new Map<string, Table1Row>();
  for (const pt of points) {
    rows.set(pt.profile.model_name, {
      base: pt.base,
      model: pt.profile.model_name,
      kind: pt.kind,
      method: pt.method,
      target: pt.target,
      actual: pt.actual,
      nmHolds: pt.nmHolds,
      parameters: pt.profile.parameters,
    });
  }
  const kindOrder = (k: KindLabel): number => (k === 'dense' ? 0 : k === 'unstructured' ? 1 : 2);
  return [...rows.values()].sort(
    (a, b) => a.base.localeCompare(b.base) || kindOrder(a.kind) - kindOrder(b.kind) || a.kind.localeCompare(b.kind) ||
      a.method.localeCompare(b.method) || (a.target ?? a.actual) - (b.target ?? b.actual),
  );
}
