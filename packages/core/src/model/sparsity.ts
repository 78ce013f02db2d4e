/**
 * Weight sparsity and N:M structure.
 *
 * Weights are the constant tensors of rank >= 2 feeding Conv/ConvTranspose/Gemm/MatMul (and their integer and
 * QLinear forms), see constants.ts. `actual` is the fraction of exact zeros (+0 and -0; for quantized weights,
 * values equal to the zero point) over all of their elements.
 *
 * N:M, as python/suite/sparsity.py (the suite generator) defines it: view a weight as [dim0, K] with dim0 the output
 * channel and K = prod(rest), split every row into consecutive groups of m along K; when K is not a multiple of m the
 * last group of each row is shorter and is checked by the same rule (as if padded with zeros). N:M holds for a
 * tensor when every group has at most n nonzeros, and for the model when it holds for every weight tensor.
 * Conv weights [M, C/g, k...] and Gemm transB=1 weights [N, K] are read as stored; a 2-D weight stored as [K, N]
 * (MatMul B, Gemm B without transB) is read transposed so that groups run along its reduction axis K, as sparse
 * tensor cores need.
 *
 * Classification:
 * - 'dense' when fewer than 1% of weight elements are zero;
 * - 'n_m' with the strictest of 1:4, 1:2, 2:4, 4:8 that holds for every weight tensor and is saturated: at least 75%
 *   of all groups keep exactly min(n, group length) nonzeros. Saturation tells an N:M-pruned model (almost every
 *   group keeps its n) from a very sparse unstructured one where the pattern holds by accident (most groups below n);
 * - 'unstructured' otherwise. `patterns` still reports, for each candidate, whether it holds and its saturation.
 */
import { alignedBytes, float32View } from './onnx-access.js';
import type { ConstTensor, WeightOrientation, WeightRef } from './constants.js';
import { product } from './shapes.js';

export const NM_CANDIDATES: readonly { n: number; m: number }[] = [
  { n: 1, m: 4 },
  { n: 1, m: 2 },
  { n: 2, m: 4 },
  { n: 4, m: 8 },
];

/**
 * Group sizes whose histograms are kept per tensor, so any n:m with these m can be answered later. Each is twice
 * the previous one (addRowGroups folds pairs of groups level by level).
 */
export const HISTOGRAM_GROUP_SIZES: readonly number[] = [2, 4, 8, 16];

const DENSE_BELOW = 0.01;
const SATURATION_MIN = 0.75;

/** Nonzero counts of the m-groups of a tensor's rows. */
export interface GroupHistogram {
  /** full[k] = number of groups of exactly m elements with k nonzeros (k = 0..m). */
  full: number[];
  /** Length of the shorter last group of every row (row length % m); 0 when rows divide evenly. */
  tailLength: number;
  /** tail[k] = number of those shorter groups with k nonzeros; empty when tailLength is 0. */
  tail: number[];
}

export interface TensorSparsity {
  name: string;
  /** Shape as stored in the file. */
  shape: number[];
  dtype: string;
  source: ConstTensor['source'];
  consumerOp: string;
  orientation: WeightOrientation;
  elements: number;
  zeros: number;
  sparsity: number;
  /** Strictest candidate pattern ("2:4") that holds for this tensor alone, or null. */
  nm: string | null;
  /** Keyed by m (each of HISTOGRAM_GROUP_SIZES). */
  groupHistograms: Record<string, GroupHistogram>;
}

export interface NMPatternStat {
  n: number;
  m: number;
  /** Holds for every weight tensor. */
  holds: boolean;
  /** Fraction of all groups holding exactly min(n, group length) nonzeros. */
  saturation: number;
}

export interface SparsityAnalysis {
  actual: number;
  kind: 'dense' | 'unstructured' | 'n_m';
  n: number | null;
  m: number | null;
  /** true when kind is 'n_m'; null otherwise (use nmPatternHolds() for a declared pattern). */
  nmPatternHolds: boolean | null;
  weightElements: number;
  weightZeros: number;
  patterns: NMPatternStat[];
  perTensor: TensorSparsity[];
  /** Weights whose values PBH could not read (external data, sparse initializers, unusual dtypes). */
  skipped: { name: string; reason: string }[];
}

/** A tensor given by its values in stored layout, for checkNM. */
export interface WeightLike {
  name: string;
  dims: readonly number[];
  data: ArrayLike<number>;
}

export interface NMCheck {
  n: number;
  m: number;
  holds: boolean;
  perTensor: { name: string; holds: boolean; groups: number; violatingGroups: number; reason: string | null }[];
}

/** Checks the N:M definition above on tensors given as values, rows = dims[0], groups along prod(dims[1:]). */
export function checkNM(tensors: readonly WeightLike[], n: number, m: number): NMCheck {
  if (!Number.isInteger(n) || !Number.isInteger(m) || n < 0 || m < 1 || n > m) {
    throw new RangeError(`N:M needs integers 0 <= n <= m and m >= 1, got ${n}:${m}`);
  }
  const perTensor = tensors.map((t) => {
    if (t.dims.length < 2) return { name: t.name, holds: false, groups: 0, violatingGroups: 0, reason: 'rank below 2' };
    const rows = t.dims[0]!;
    const cols = product(t.dims.slice(1));
    if (t.data.length < rows * cols) {
      return { name: t.name, holds: false, groups: 0, violatingGroups: 0, reason: `holds ${t.data.length} values for ${rows * cols} elements` };
    }
    let groups = 0;
    let violatingGroups = 0;
    for (let r = 0; r < rows; r++) {
      for (let start = 0; start < cols; start += m) {
        const end = Math.min(start + m, cols);
        let k = 0;
        for (let i = r * cols + start; i < r * cols + end; i++) if (t.data[i] !== 0) k++;
        groups++;
        if (k > n) violatingGroups++;
      }
    }
    return { name: t.name, holds: violatingGroups === 0, groups, violatingGroups, reason: null };
  });
  return { n, m, holds: perTensor.length > 0 && perTensor.every((t) => t.holds), perTensor };
}

/** Whether every analysed weight tensor meets n:m, from the stored histograms; null when m was not histogrammed. */
export function nmPatternHolds(s: Pick<SparsityAnalysis, 'perTensor'>, n: number, m: number): boolean | null {
  if (!HISTOGRAM_GROUP_SIZES.includes(m) || s.perTensor.length === 0) return null;
  return patternStat(s.perTensor, n, m).holds;
}

export function analyzeSparsity(weights: readonly WeightRef[]): SparsityAnalysis {
  const perTensor: TensorSparsity[] = [];
  const skipped: SparsityAnalysis['skipped'] = [];
  for (const w of weights) {
    const stats = tensorStats(w);
    if (typeof stats === 'string') skipped.push({ name: w.constant.name, reason: stats });
    else perTensor.push(stats);
  }
  const weightElements = perTensor.reduce((a, t) => a + t.elements, 0);
  const weightZeros = perTensor.reduce((a, t) => a + t.zeros, 0);
  const actual = weightElements === 0 ? 0 : weightZeros / weightElements;
  const patterns = NM_CANDIDATES.map(({ n, m }) => patternStat(perTensor, n, m));
  for (const t of perTensor) {
    const hit = NM_CANDIDATES.find(({ n, m }) => patternStat([t], n, m).holds);
    t.nm = hit ? `${hit.n}:${hit.m}` : null;
  }
  const base = { actual, weightElements, weightZeros, patterns, perTensor, skipped };
  if (actual < DENSE_BELOW) return { ...base, kind: 'dense', n: null, m: null, nmPatternHolds: null };
  const nm = patterns.find((p) => p.holds && p.saturation >= SATURATION_MIN);
  if (nm) return { ...base, kind: 'n_m', n: nm.n, m: nm.m, nmPatternHolds: true };
  return { ...base, kind: 'unstructured', n: null, m: null, nmPatternHolds: null };
}

function patternStat(tensors: readonly TensorSparsity[], n: number, m: number): NMPatternStat {
  let groups = 0;
  let saturated = 0;
  let holds = tensors.length > 0;
  for (const t of tensors) {
    const h = t.groupHistograms[String(m)];
    if (!h) {
      holds = false;
      continue;
    }
    h.full.forEach((c, k) => {
      groups += c;
      if (k === n) saturated += c;
      if (k > n && c > 0) holds = false;
    });
    const tailTarget = Math.min(n, h.tailLength);
    h.tail.forEach((c, k) => {
      groups += c;
      if (k === tailTarget) saturated += c;
      if (k > n && c > 0) holds = false;
    });
  }
  return { n, m, holds, saturation: groups === 0 ? 0 : saturated / groups };
}

type Values = Float32Array | Float64Array | Uint16Array | Int8Array | Uint8Array | Int32Array;

/** Reads one row of a weight in the orientation the N:M check uses. */
interface RowReader {
  rows: number;
  cols: number;
  /** Fills pairs[j] with the nonzeros among row elements 2j and 2j+1; returns the row's nonzero count. */
  pairCounts(row: number, pairs: Uint8Array): number;
}

function tensorStats(w: WeightRef): TensorSparsity | string {
  const c = w.constant;
  const elements = product(c.dims);
  const reader = rowReader(w);
  if (typeof reader === 'string') return reader;
  const acc = HISTOGRAM_GROUP_SIZES.map((m) => new HistogramAccumulator(m, reader.cols));
  const pairs = new Uint8Array(Math.ceil(reader.cols / 2));
  let nonzero = 0;
  const uniform = c.source === 'constant_of_shape';
  // A ConstantOfShape fill has identical rows: read one, count it `rows` times.
  const rowsToRead = uniform ? Math.min(1, reader.rows) : reader.rows;
  const weight = uniform ? reader.rows : 1;
  for (let r = 0; r < rowsToRead; r++) {
    nonzero += weight * reader.pairCounts(r, pairs);
    addRowGroups(pairs, reader.cols, acc, weight);
  }
  const zeros = elements - nonzero;
  return {
    name: c.name,
    shape: c.dims.slice(),
    dtype: c.dtype,
    source: c.source,
    consumerOp: w.consumerOp,
    orientation: w.orientation,
    elements,
    zeros,
    sparsity: elements === 0 ? 0 : zeros / elements,
    nm: null,
    groupHistograms: Object.fromEntries(acc.map((a) => [String(a.m), a.result()])),
  };
}

class HistogramAccumulator {
  readonly full: Float64Array;
  readonly tail: Float64Array;
  readonly tailLength: number;

  constructor(
    readonly m: number,
    cols: number,
  ) {
    this.tailLength = cols % m;
    this.full = new Float64Array(m + 1);
    this.tail = new Float64Array(this.tailLength ? this.tailLength + 1 : 0);
  }

  result(): GroupHistogram {
    return { full: Array.from(this.full), tailLength: this.tailLength, tail: Array.from(this.tail) };
  }
}

/**
 * Adds one row's groups to every histogram (one accumulator per m = 2, 4, 8, ...). Group counts for 2m are sums of
 * adjacent m-group counts, so the row is read once (as pair counts) and folded in place level by level.
 */
function addRowGroups(pairs: Uint8Array, cols: number, acc: readonly HistogramAccumulator[], weight: number): void {
  let groups = Math.ceil(cols / 2);
  for (let level = 0; level < acc.length; level++) {
    const h = acc[level]!;
    const full = Math.floor(cols / h.m);
    const hist = h.full;
    for (let j = 0; j < full; j++) {
      const k = pairs[j]!;
      hist[k] = hist[k]! + weight;
    }
    if (h.tailLength) {
      const k = pairs[groups - 1]!;
      h.tail[k] = h.tail[k]! + weight;
    }
    if (level === acc.length - 1) return;
    const next = Math.ceil(groups / 2);
    for (let j = 0; j < next; j++) pairs[j] = pairs[2 * j]! + (2 * j + 1 < groups ? pairs[2 * j + 1]! : 0);
    groups = next;
  }
}

/** A RowReader over the weight's values, or the reason they cannot be read. */
function rowReader(w: WeightRef): RowReader | string {
  const c = w.constant;
  const elements = product(c.dims);
  const transposed = w.orientation === 'transposed';
  const rows = transposed ? c.dims[1]! : c.dims[0]!;
  const cols = rows === 0 ? 0 : elements / rows;
  if (c.external) return 'stored in an external data file (not loaded)';
  if (c.source === 'sparse_initializer') return 'sparse initializer (not expanded)';
  if (c.source === 'constant_of_shape') {
    const bit = (c.fill ?? 0) !== w.zeroValue ? 1 : 0;
    return {
      rows,
      cols,
      pairCounts(_row, pairs) {
        for (let j = 0; j < pairs.length; j++) pairs[j] = bit * Math.min(2, cols - 2 * j);
        return bit * cols;
      },
    };
  }
  const t = c.tensor;
  if (!t) return 'no stored values';
  if (t.rawData && t.dataType === 1 && w.zeroValue === 0 && !transposed && t.rawData.byteOffset % 4 !== 0) {
    return unalignedFloat32Rows(t.rawData, rows, cols, elements);
  }
  const values = readValues(t.dataType, t);
  if (typeof values === 'string') return values;
  if (values.length < elements) return `holds ${values.length} values for ${elements} elements`;
  const zero = w.zeroValue;
  const half = t.dataType === 10 || t.dataType === 16;
  // Stored [K, N] read as [N, K]: row r walks column r with stride N.
  const stride = transposed ? rows : 1;
  const rowBase = (r: number): number => (transposed ? r : r * cols);
  if (values instanceof Float32Array && zero === 0 && stride === 1) {
    return { rows, cols, pairCounts: (r, pairs) => float32PairCounts(values, rowBase(r), cols, pairs) };
  }
  return {
    rows,
    cols,
    pairCounts(r, pairs) {
      const base = rowBase(r);
      let nz = 0;
      for (let j = 0, k = 0; k < cols; j++, k += 2) {
        let count = isNonzero(values[base + k * stride]!, zero, half);
        if (k + 1 < cols) count += isNonzero(values[base + (k + 1) * stride]!, zero, half);
        pairs[j] = count;
        nz += count;
      }
      return nz;
    },
  };
}

/**
 * float32 raw_data at an offset that is not a multiple of 4 cannot be viewed as a Float32Array. Copying the whole
 * tensor costs an allocation the size of the weights; copying one row at a time into a small aligned scratch
 * buffer keeps the copy in cache.
 */
function unalignedFloat32Rows(raw: Uint8Array, rows: number, cols: number, elements: number): RowReader | string {
  if (raw.byteLength < elements * 4) return `holds ${Math.floor(raw.byteLength / 4)} values for ${elements} elements`;
  const scratch = new Float32Array(cols);
  const scratchBytes = new Uint8Array(scratch.buffer);
  return {
    rows,
    cols,
    pairCounts(r, pairs) {
      scratchBytes.set(raw.subarray(r * cols * 4, (r + 1) * cols * 4));
      return float32PairCounts(scratch, 0, cols, pairs);
    },
  };
}

/** The hot path (float32 weights read as stored): one tight loop over the row. */
function float32PairCounts(values: Float32Array, base: number, cols: number, pairs: Uint8Array): number {
  let nz = 0;
  let j = 0;
  let i = base;
  const end = base + cols;
  for (; i + 1 < end; i += 2, j++) {
    const count = (values[i] !== 0 ? 1 : 0) + (values[i + 1] !== 0 ? 1 : 0);
    pairs[j] = count;
    nz += count;
  }
  if (i < end) {
    const count = values[i] !== 0 ? 1 : 0;
    pairs[j] = count;
    nz += count;
  }
  return nz;
}

function isNonzero(v: number, zero: number, half: boolean): 0 | 1 {
  if (half) return (v & 0x7fff) !== 0 ? 1 : 0;
  return v !== zero ? 1 : 0;
}

/** Values of a stored tensor as a typed array (float16/bfloat16 as raw bits), without copying when aligned. */
function readValues(dataType: number, t: NonNullable<ConstTensor['tensor']>): Values | string {
  if (t.rawData) {
    const raw = t.rawData;
    switch (dataType) {
      case 1:
        return float32View(raw);
      case 11: {
        const r = alignedBytes(raw, 8);
        return new Float64Array(r.buffer, r.byteOffset, Math.floor(r.byteLength / 8));
      }
      case 10:
      case 16: {
        const r = alignedBytes(raw, 2);
        return new Uint16Array(r.buffer, r.byteOffset, Math.floor(r.byteLength / 2));
      }
      case 3:
        return new Int8Array(raw.buffer, raw.byteOffset, raw.byteLength);
      case 2:
        return raw;
      case 6: {
        const r = alignedBytes(raw, 4);
        return new Int32Array(r.buffer, r.byteOffset, Math.floor(r.byteLength / 4));
      }
      default:
        return `dtype ${t.dtype} is not read for sparsity`;
    }
  }
  if (t.floatData) return t.floatData;
  if (t.doubleData) return t.doubleData;
  if (t.int32Data) return t.int32Data;
  return 'no stored values';
}
