import { scoreKind } from './accuracy.js';
import type { ProfileEntry } from './data.js';
import { noiseOf } from './noise.js';
import { pruningMethods } from './sparsity.js';
import { tuningOf } from './tuning.js';

/**
 * The compression study as the site reads it: every current Profile named by what was done to its model (dense fp32,
 * bf16 execution, INT8 static / dynamic / NNCF, N:M or unstructured pruning by method, pruning + INT8), and compared
 * with its dense fp32 model's Profile on the same engine (name and door), batch size, scenario, device and hardware:
 * throughput relative to it, and the accuracy cost in percentage points. What was done comes from the model's own
 * facts (pbh.optimization read back by pbh run, measured sparsity) and the precision each engine reports it executed.
 */

export interface CompressionPoint {
  profile: ProfileEntry;
  /** e.g. "dense fp32", "bf16", "INT8 static", "2:4 (obc)", "50% (magnitude)", "2:4 (obc) + INT8 static". */
  variant: string;
  /** Sort position of the variant's kind: dense, reduced float, quantized, pruned, pruned + quantized. */
  order: number;
  /** The dense fp32 model this one was made from (itself when it is that model). */
  base: string;
  /** The engine as the study compares it: name and door, so OpenVINO bf16 is relative to OpenVINO fp32. */
  engine: string;
  dense: ProfileEntry | null;
  relThroughput: number | null;
  /** Dense accuracy - this accuracy, in percentage points (positive: accuracy lost); null without trained scores. */
  accuracyCost: number | null;
  /** A language model's quality cost: its bits per byte on held-out text minus the dense model's (positive: worse). */
  bitsPerByteCost: number | null;
  /** p99 / p50 of the per-batch latency: how long the tail is. */
  tail: number | null;
  noisy: boolean;
}

const QUANTIZED_LABEL: Record<string, string> = {
  static: 'INT8 static',
  dynamic: 'INT8 dynamic',
  nncf: 'INT8 static (NNCF)',
  int4: 'int4 weights (MatMulNBits)',
  'nncf-int8': 'int8 weights (NNCF)',
  'nncf-int4': 'int4 weights (NNCF)',
};

/**
 * The pruning label with its method from metadata (sparsity.ts pruningMethods: the file's own, else its pruned
 * source's); none where no file recorded one. A quantized file's few weights rounded to zero are not pruning unless a
 * pruned source recorded it.
 */
function pruning(p: ProfileEntry, quantized: boolean, method: string | null): string | null {
  const s = p.profile.model?.sparsity;
  if (!s || s.kind === 'dense' || s.actual === 0) return null;
  if (quantized && method === null && s.kind !== 'n_m') return null;
  const how = method === null ? '' : ` (${method})`;
  if (s.kind === 'n_m' && s.n !== null && s.m !== null) return `${s.n}:${s.m}${how}`;
  return `${Math.round((s.target ?? s.actual) * 100)}%${how}`;
}

/** What was done to the model and how it ran, as one label, with its sort position. */
export function variantOf(p: ProfileEntry, method: string | null = p.profile.model?.sparsity?.method ?? null): { variant: string; order: number } {
  const q = p.profile.model?.quantized ?? null;
  // Weights an engine compressed on its own path (an LLM runtime's option), read back from what it ran.
  const weights = p.profile.engine.precision?.weights ?? null;
  const quantized = q
    ? (QUANTIZED_LABEL[q.method] ?? `${q.weight_dtype ?? 'quantized'} ${q.method}`)
    : p.profile.model?.quantization
      ? `quantized ${p.profile.model.quantization}`
      : weights
        ? `${weights} weights (${p.engine_name})`
        : null;
  const pruned = pruning(p, quantized !== null, method);
  if (pruned && quantized) return { variant: `${pruned} + ${quantized}`, order: 4 };
  if (quantized) return { variant: quantized, order: 2 };
  if (pruned) return { variant: pruned, order: 3 };
  const precision = p.precision ?? 'fp32';
  return precision === 'fp32' ? { variant: 'dense fp32', order: 0 } : { variant: precision, order: 1 };
}

const isDenseFp32 = (p: ProfileEntry): boolean => variantOf(p).variant === 'dense fp32';

/**
 * The engine as compared: its name, TVM's tuning (tuned against tuned: untuned TVM is another program) and the door it
 * ran through. An entry's label is a setting (e.g. precision), so OpenVINO bf16 is relative to OpenVINO fp32.
 */
export function engineOf(p: ProfileEntry): string {
  const tuning = tuningOf(p);
  const name = tuning === null ? p.engine_name : `${p.engine_name} ${tuning}`;
  return p.profile.engine.process === 'harness' ? `${name} (in process)` : name;
}

/**
 * The dense fp32 model each Profile's model was made from: the dense float model on the same dataset whose name is the
 * longest prefix of its name (pbh prune and pbh quantize name variants <model>_<method>_<tag>), else the only one of
 * its family; none: its own base (drawn, but nothing to be relative to).
 */
export function compressionBases(profiles: readonly ProfileEntry[]): Map<string, string> {
  const dense = profiles.filter(isDenseFp32);
  const out = new Map<string, string>();
  for (const p of profiles) {
    if (out.has(p.model_name)) continue;
    const same = dense.filter((d) => d.dataset_name === p.dataset_name);
    if (same.some((d) => d.model_name === p.model_name)) {
      out.set(p.model_name, p.model_name);
      continue;
    }
    const prefixed = same.filter((d) => p.model_name.startsWith(d.model_name)).sort((a, b) => b.model_name.length - a.model_name.length)[0];
    const family = new Set(same.filter((d) => d.model_family !== null && d.model_family === p.model_family).map((d) => d.model_name));
    out.set(p.model_name, prefixed?.model_name ?? (family.size === 1 ? [...family][0]! : p.model_name));
  }
  return out;
}

const cellOf = (p: ProfileEntry, model: string): string => [model, engineOf(p), p.batch_size, p.scenario, p.engine_device, p.hardware].join('\u0000');

/** Current ok Profiles of one study as compression points. */
export function compressionPoints(current: readonly ProfileEntry[]): CompressionPoint[] {
  const bases = compressionBases(current);
  const methods = pruningMethods(current);
  const denseByCell = new Map(current.filter(isDenseFp32).map((p) => [cellOf(p, p.model_name), p]));
  return current
    .filter((p) => p.throughput_mean !== null)
    .map((p) => {
      const base = bases.get(p.model_name) ?? p.model_name;
      const dense = denseByCell.get(cellOf(p, base)) ?? null;
      const accuracy = scoreKind(p) === 'accuracy' ? p.accuracy : null;
      const denseAccuracy = dense && scoreKind(dense) === 'accuracy' ? dense.accuracy : null;
      const bpb = p.profile.generation?.perplexity?.bits_per_byte ?? null;
      const denseBpb = dense?.profile.generation?.perplexity?.bits_per_byte ?? null;
      return {
        profile: p,
        ...variantOf(p, methods.get(p.model_name) ?? null),
        base,
        engine: engineOf(p),
        dense,
        relThroughput: dense?.throughput_mean ? (p.throughput_mean ?? 0) / dense.throughput_mean : null,
        accuracyCost: accuracy !== null && denseAccuracy !== null ? (denseAccuracy - accuracy) * 100 : null,
        bitsPerByteCost: bpb !== null && denseBpb !== null ? bpb - denseBpb : null,
        tail: p.p50_ms && p.p99_ms ? p.p99_ms / p.p50_ms : null,
        noisy: noiseOf(p).noisy || (dense !== null && noiseOf(dense).noisy),
      };
    });
}

export interface CompressionTable {
  batch: number;
  engines: string[];
  /** One row per base model and variant; cells by engine (null: no ok Profile for that engine). */
  rows: { base: string; variant: string; cells: (CompressionPoint | null)[] }[];
}

/** One table per batch size: variants down (grouped by base model, in kind order), engines across. */
export function compressionTables(points: readonly CompressionPoint[]): CompressionTable[] {
  const batches = [...new Set(points.map((pt) => pt.profile.batch_size))].sort((a, b) => a - b);
  return batches.map((batch) => {
    const mine = points.filter((pt) => pt.profile.batch_size === batch);
    const engines = [...new Set(mine.map((pt) => pt.engine))].sort();
    const keys = new Map<string, { base: string; variant: string; order: number }>();
    for (const pt of mine) keys.set(`${pt.base}\u0000${pt.variant}`, { base: pt.base, variant: pt.variant, order: pt.order });
    const rows = [...keys.values()]
      .sort((a, b) => a.base.localeCompare(b.base) || a.order - b.order || a.variant.localeCompare(b.variant))
      .map(({ base, variant }) => ({
        base,
        variant,
        cells: engines.map((e) => mine.find((pt) => pt.base === base && pt.variant === variant && pt.engine === e) ?? null),
      }));
    return { batch, engines, rows };
  });
}

export interface Extremes {
  engine: string;
  best: CompressionPoint;
  worst: CompressionPoint;
  /** Variants (not dense fp32) measured on the engine. */
  count: number;
}

/** Per engine, the fastest and the slowest variant relative to its dense fp32 model (either may be noisy: said so). */
export function extremesPerEngine(points: readonly CompressionPoint[]): Extremes[] {
  const byEngine = new Map<string, CompressionPoint[]>();
  for (const pt of points) {
    if (pt.relThroughput === null || pt.variant === 'dense fp32') continue;
    byEngine.set(pt.engine, [...(byEngine.get(pt.engine) ?? []), pt]);
  }
  return [...byEngine.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([engine, list]) => {
      const sorted = [...list].sort((a, b) => b.relThroughput! - a.relThroughput!);
      return { engine, best: sorted[0]!, worst: sorted[sorted.length - 1]!, count: list.length };
    });
}

/** Failed cells of the study's models (a refusal is a finding: TVM has no int8 kernels), latest per cell. */
export function refusals(profiles: readonly ProfileEntry[], models: ReadonlySet<string>): ProfileEntry[] {
  const latest = new Map<string, ProfileEntry>();
  for (const p of profiles) {
    if (!models.has(p.model_name)) continue;
    const seen = latest.get(p.seriesKey);
    if (!seen || p.created_at > seen.created_at) latest.set(p.seriesKey, p);
  }
  return [...latest.values()].filter((p) => p.status !== 'ok').sort((a, b) => a.model_name.localeCompare(b.model_name) || a.engine_entry.localeCompare(b.engine_entry) || a.batch_size - b.batch_size);
}
