/**
 * Static shape inference over an ONNX graph for the operators common in vision/MLP models.
 *
 * Shapes are concrete: a symbolic batch dimension is bound to 1 so every figure derived from them is per sample
 * (a model with a fixed batch N keeps N, and `batchSize` says so, so callers can divide). Other symbolic dims are
 * bound from `options.dims` or stay unknown. Small integer tensors (shapes, axes, indices) are also evaluated,
 * so exporter patterns like Shape -> Gather -> Unsqueeze -> Concat -> Reshape resolve. An op without a rule leaves
 * its outputs unknown (unless the model's value_info states them) and inference carries on.
 */
import { attrFloats, attrInt, attrInts, attrString, attrTensor, tensorElementCount, tensorToNumbers } from './onnx-access.js';
import type { OnnxDim, OnnxGraph, OnnxModel, OnnxNode, OnnxTensor } from './onnx-reader.js';

export type Shape = number[];

/** A small tensor whose values are known statically. */
export interface KnownValue {
  dims: number[];
  values: number[];
  isInt: boolean;
}

export interface UnresolvedNode {
  node: string;
  opType: string;
  reason: string;
}

export interface ShapeInferenceOptions {
  /** Values for symbolic dims other than the batch, e.g. { height: 224, width: 224 }. */
  dims?: Record<string, number>;
  /**
   * Concrete shapes (and, for small constant inputs, values) of graph inputs: a cell's shapes. They replace the
   * declared shapes, bind the symbols those declare, and a value can decide an If (silero's sample rate).
   */
  inputs?: Record<string, { shape: number[]; values?: number[] | null; isInt?: boolean }>;
  /** The batch the given shapes describe (figures are divided by it); default as without `inputs`. */
  batch?: number;
}

/** What PBH knew of an If or Loop: the branch taken (null: not known, both inferred) or the trip count. */
export interface BranchChoice {
  kind: 'if' | 'loop';
  taken: 'then_branch' | 'else_branch' | null;
  trips: number | null;
}

export interface ShapeInference {
  /** Concrete shape of every value PBH could work out (graph inputs, initializers, node outputs). */
  shapes: Map<string, Shape>;
  /** Statically known values of small tensors. */
  values: Map<string, KnownValue>;
  /** Batch size the shapes describe: 1 when the batch dim is symbolic, else the model's fixed batch. */
  batchSize: number;
  /** Symbol -> value used for symbolic input dims. */
  bindings: Record<string, number>;
  /** Input dims that stayed symbolic, as "input[axis]=symbol". */
  unboundDims: string[];
  /** Op types (domain-qualified when not the ONNX domain) PBH has no shape rule for. */
  unsupportedOps: string[];
  /** Nodes with at least one output whose shape stayed unknown. */
  unresolved: UnresolvedNode[];
  /** Node display name (name, or opType_index when unnamed) per node index, in graph order. */
  nodeNames: string[];
  /** Topological order of node indices used for inference. */
  order: number[];
  /** Every If and Loop node (any depth) with what PBH knew of it. */
  branches: Map<OnnxNode, BranchChoice>;
  /** Display names of subgraph nodes ("If_3/then_branch/Conv_0"). */
  subgraphNames: Map<OnnxNode, string>;
  warnings: string[];
}

/** Largest tensor whose values PBH tracks (shape vectors and friends, not weights). */
const MAX_TRACKED_ELEMENTS = 4096;
/** Float tensors matter only as scalars and scale vectors (Resize scales, Clip bounds). */
const MAX_TRACKED_FLOATS = 64;

function trackable(count: number, isInt: boolean): boolean {
  return count <= (isInt ? MAX_TRACKED_ELEMENTS : MAX_TRACKED_FLOATS);
}

class ShapeRuleError extends Error {}

function fail(reason: string): never {
  throw new ShapeRuleError(reason);
}

/** What a rule sees of a node's inputs. Missing optional inputs ('' names) read as absent and null. */
interface NodeInputs {
  count: number;
  present(i: number): boolean;
  shape(i: number): Shape | null;
  value(i: number): KnownValue | null;
  /** The shape, or a ShapeRuleError naming the input. */
  need(i: number): Shape;
  needValue(i: number, what: string): KnownValue;
}

interface RuleOutput {
  shapes: (Shape | null)[];
  values?: (KnownValue | null)[];
}

type ShapeRule = (n: OnnxNode, io: NodeInputs) => RuleOutput;

export function displayNodeName(node: OnnxNode, index: number): string {
  return node.name !== '' ? node.name : `${node.opType}_${index}`;
}

export function qualifiedOpType(node: OnnxNode): string {
  return node.domain === '' ? node.opType : `${node.domain}.${node.opType}`;
}

export function inferShapes(model: OnnxModel, options: ShapeInferenceOptions = {}): ShapeInference {
  const graph = model.graph;
  const shapes = new Map<string, Shape>();
  const values = new Map<string, KnownValue>();
  const warnings: string[] = [];
  const initializerNames = new Set(graph.initializers.map((t) => t.name));

  const addInitializers = (g: OnnxGraph): void => {
    for (const t of g.initializers) {
      shapes.set(t.name, t.dims.slice());
      const v = knownValueOfTensor(t);
      if (v) values.set(t.name, v);
    }
    for (const sp of g.sparseInitializers) {
      if (sp.values) shapes.set(sp.values.name, sp.dims.slice());
    }
  };
  addInitializers(graph);

  const given = options.inputs ?? {};
  const bound = bindInputDims(graph, initializerNames, options.dims ?? {}, given);
  const { bindings, unboundDims } = bound;
  const batchSize = options.batch ?? bound.batchSize;
  for (const input of graph.inputs) {
    if (initializerNames.has(input.name)) continue;
    const fed = given[input.name];
    if (fed) {
      shapes.set(input.name, fed.shape.slice());
      if (fed.values && fed.values.length === product(fed.shape) && trackable(fed.values.length, fed.isInt ?? true)) {
        values.set(input.name, { dims: fed.shape.slice(), values: fed.values.slice(), isInt: fed.isInt ?? true });
      }
      continue;
    }
    if (input.type.kind !== 'tensor' || !input.type.shape) continue;
    const resolved = resolveDims(input.type.shape, bindings);
    if (resolved) shapes.set(input.name, resolved);
  }

  const declared = declaredShapes(graph, bindings);
  const order = topologicalOrder(graph, warnings);
  const nodeNames = graph.nodes.map((n, i) => displayNodeName(n, i));
  const unsupported = new Set<string>();
  const unresolved: UnresolvedNode[] = [];
  const branches = new Map<OnnxNode, BranchChoice>();
  const subgraphNames = new Map<OnnxNode, string>();

  /** One node: its rule (If and Loop infer their bodies in this same scope: ONNX names are unique model-wide). */
  const inferNode = (node: OnnxNode, name: string): void => {
    const rule = node.domain === '' ? RULES[node.opType] : CONTRIB_RULES[qualifiedOpType(node)];
    let out: RuleOutput | null = null;
    let reason = '';
    const io = makeInputs(node, shapes, values);
    if (node.domain === '' && (node.opType === 'If' || node.opType === 'Loop')) {
      try {
        out = node.opType === 'If' ? inferIf(node, name, io) : inferLoop(node, name, io);
      } catch (err) {
        reason = err instanceof ShapeRuleError ? err.message : `PBH's ${node.opType} shape rule failed: ${String(err)}`;
      }
    } else if (!rule) {
      unsupported.add(qualifiedOpType(node));
      reason = `no shape rule for ${qualifiedOpType(node)}`;
    } else {
      try {
        out = rule(node, io);
      } catch (err) {
        // A malformed node must not stop the analysis of the rest of the graph; the reason is reported per node.
        reason = err instanceof ShapeRuleError ? err.message : `PBH's ${node.opType} shape rule failed: ${String(err)}`;
      }
    }
    let missing = false;
    node.outputs.forEach((output, k) => {
      if (output === '') return;
      const sh = out?.shapes[k] ?? null;
      const fallback = declared.get(output);
      if (sh) {
        shapes.set(output, sh);
        if (fallback && !sameShape(fallback, sh)) {
          warnings.push(`${name}: inferred shape [${sh.join(',')}] for ${output} differs from the model's declared [${fallback.join(',')}]; using the inferred one`);
        }
      } else if (fallback) {
        shapes.set(output, fallback);
      } else {
        missing = true;
      }
      const v = out?.values?.[k];
      if (v && sh && v.values.length === product(sh)) values.set(output, v);
    });
    if (missing) unresolved.push({ node: name, opType: qualifiedOpType(node), reason: reason || 'an input shape is unknown' });
  };

  const inferGraph = (g: OnnxGraph, prefix: string): void => {
    addInitializers(g);
    for (const [k, v] of declaredShapes(g, bindings)) if (!declared.has(k)) declared.set(k, v);
    g.nodes.forEach((n, i) => {
      const name = `${prefix}/${displayNodeName(n, i)}`;
      subgraphNames.set(n, name);
      inferNode(n, name);
    });
  };

  const subgraph = (node: OnnxNode, attr: string): OnnxGraph => {
    const a = node.attributes[attr];
    if (a?.type !== 'graph') fail(`${attr} is not a graph attribute`);
    return a.value;
  };

  /** The branch the condition takes when it is known (a constant input, folded shape arithmetic), else both. */
  const inferIf = (node: OnnxNode, name: string, io: NodeInputs): RuleOutput => {
    const cond = io.value(0);
    const taken: 'then_branch' | 'else_branch' | null = cond && cond.values.length === 1 ? (cond.values[0] ? 'then_branch' : 'else_branch') : null;
    branches.set(node, { kind: 'if', taken, trips: null });
    const inferred = (taken ? [taken] : (['then_branch', 'else_branch'] as const)).map((b) => {
      const g = subgraph(node, b);
      inferGraph(g, `${name}/${b}`);
      return g;
    });
    const shapesOut = node.outputs.map((_, k) => {
      const got = inferred.map((g) => shapes.get(g.outputs[k]?.name ?? '') ?? null);
      return got.every((x) => x !== null && sameShape(x, got[0]!)) ? got[0]! : null;
    });
    const valuesOut = node.outputs.map((_, k) => (inferred.length === 1 ? (values.get(inferred[0]!.outputs[k]?.name ?? '') ?? null) : null));
    return { shapes: shapesOut, values: valuesOut };
  };

  /** The body inferred once at the initial carried shapes; the trip count (M) when it is known. */
  const inferLoop = (node: OnnxNode, name: string, io: NodeInputs): RuleOutput => {
    const body = subgraph(node, 'body');
    const trips = io.present(0) ? (io.value(0)?.values[0] ?? null) : null;
    branches.set(node, { kind: 'loop', taken: null, trips });
    const carried = node.inputs.length - 2;
    body.inputs.forEach((v, i) => {
      if (i < 2) shapes.set(v.name, []);
      else {
        const sh = io.shape(i);
        if (sh) shapes.set(v.name, sh);
      }
    });
    inferGraph(body, `${name}/body`);
    const shapesOut = node.outputs.map((_, k) => {
      if (k < carried) {
        const init = io.shape(2 + k);
        const after = shapes.get(body.outputs[1 + k]?.name ?? '') ?? null;
        return init && after && sameShape(init, after) ? init : null;
      }
      const step = shapes.get(body.outputs[1 + k]?.name ?? '') ?? null;
      return step && trips !== null ? [trips, ...step] : null;
    });
    return { shapes: shapesOut };
  };

  for (const idx of order) inferNode(graph.nodes[idx]!, nodeNames[idx]!);

  return {
    shapes,
    values,
    batchSize,
    bindings,
    unboundDims,
    unsupportedOps: [...unsupported].sort(),
    unresolved,
    nodeNames,
    order,
    branches,
    subgraphNames,
    warnings,
  };
}

/**
 * Binds the batch dim (axis 0 of every graph input, when symbolic or unset) to 1, other symbols from `dims`.
 * The batch is taken from the first real input; the same symbol elsewhere gets the same value.
 */
function bindInputDims(
  graph: OnnxGraph,
  initializerNames: Set<string>,
  dims: Record<string, number>,
  given: NonNullable<ShapeInferenceOptions['inputs']> = {},
): { bindings: Record<string, number>; batchSize: number; unboundDims: string[] } {
  const bindings: Record<string, number> = { ...dims };
  // A given shape binds every symbol its declared shape names (value_info and outputs that use them resolve too).
  for (const input of graph.inputs) {
    const fed = given[input.name];
    if (!fed || input.type.kind !== 'tensor' || !input.type.shape) continue;
    input.type.shape.forEach((d, axis) => {
      if (typeof d === 'string' && fed.shape[axis] !== undefined && bindings[d] === undefined) bindings[d] = fed.shape[axis]!;
    });
  }
  let batchSize: number | null = null;
  const unboundDims: string[] = [];
  for (const input of graph.inputs) {
    if (initializerNames.has(input.name)) continue;
    if (input.type.kind !== 'tensor' || !input.type.shape || input.type.shape.length === 0) continue;
    const first = input.type.shape[0];
    if (typeof first === 'number' && first > 0) {
      batchSize ??= first;
    } else {
      batchSize ??= 1;
      if (typeof first === 'string' && bindings[first] === undefined) bindings[first] = 1;
    }
  }
  for (const input of graph.inputs) {
    if (initializerNames.has(input.name) || input.type.kind !== 'tensor' || !input.type.shape || given[input.name]) continue;
    input.type.shape.forEach((d, axis) => {
      if (axis === 0) return;
      if (typeof d === 'string' && bindings[d] === undefined) unboundDims.push(`${input.name}[${axis}]=${d}`);
      if (d === null || (typeof d === 'number' && d <= 0)) unboundDims.push(`${input.name}[${axis}]=?`);
    });
  }
  return { bindings, batchSize: batchSize ?? 1, unboundDims };
}

/**
 * Concrete dims, or null when one stays unknown. Exporters write 0 or -1 for "unknown", so only positive values
 * count as known; with `batchAxis`, an unknown axis 0 is the batch and becomes 1.
 */
function resolveDims(dims: OnnxDim[], bindings: Record<string, number>, batchAxis = true): Shape | null {
  const out: number[] = [];
  for (let axis = 0; axis < dims.length; axis++) {
    const d = dims[axis];
    if (typeof d === 'number' && d > 0) out.push(d);
    else if (typeof d === 'string' && bindings[d] !== undefined) out.push(bindings[d]!);
    else if (axis === 0 && batchAxis && (d === null || (typeof d === 'number' && d <= 0))) out.push(1);
    else return null;
  }
  return out;
}

/** Fully resolvable shapes the model itself declares in value_info and graph outputs. */
function declaredShapes(graph: OnnxGraph, bindings: Record<string, number>): Map<string, Shape> {
  const out = new Map<string, Shape>();
  for (const vi of [...graph.valueInfo, ...graph.outputs]) {
    if (vi.type.kind !== 'tensor' || !vi.type.shape) continue;
    const s = resolveDims(vi.type.shape, bindings, false);
    if (s) out.set(vi.name, s);
  }
  return out;
}

/**
 * Node indices in an order where producers come first: file order when it already is one (as the ONNX spec
 * requires), else Kahn's algorithm.
 */
function topologicalOrder(graph: OnnxGraph, warnings: string[]): number[] {
  const producer = new Map<string, number>();
  graph.nodes.forEach((n, i) => n.outputs.forEach((o) => o !== '' && producer.set(o, i)));
  const inFileOrder = graph.nodes.every((n, i) => n.inputs.every((x) => (producer.get(x) ?? -1) < i));
  if (inFileOrder) return graph.nodes.map((_, i) => i);

  const missing = graph.nodes.map((n) => new Set(n.inputs.filter((x) => producer.has(x)).map((x) => producer.get(x)!)));
  const dependents: number[][] = graph.nodes.map(() => []);
  missing.forEach((deps, i) => deps.forEach((d) => dependents[d]!.push(i)));
  const queue = missing.flatMap((deps, i) => (deps.size === 0 ? [i] : []));
  const order: number[] = [];
  for (let head = 0; head < queue.length; head++) {
    const i = queue[head]!;
    order.push(i);
    for (const d of dependents[i]!) {
      const deps = missing[d]!;
      deps.delete(i);
      if (deps.size === 0) queue.push(d);
    }
  }
  if (order.length < graph.nodes.length) {
    warnings.push(`the graph has a cycle: ${graph.nodes.length - order.length} nodes were left out of shape inference`);
  } else {
    warnings.push('the graph nodes are not stored in topological order (PBH sorted them)');
  }
  return order;
}

function makeInputs(node: OnnxNode, shapes: Map<string, Shape>, values: Map<string, KnownValue>): NodeInputs {
  const nameAt = (i: number): string => node.inputs[i] ?? '';
  return {
    count: node.inputs.length,
    present: (i) => nameAt(i) !== '',
    shape: (i) => shapes.get(nameAt(i)) ?? null,
    value: (i) => values.get(nameAt(i)) ?? null,
    need(i) {
      const s = shapes.get(nameAt(i));
      if (!s) fail(nameAt(i) === '' ? `input ${i} is missing` : `shape of input ${nameAt(i)} is unknown`);
      return s;
    },
    needValue(i, what) {
      const v = values.get(nameAt(i));
      if (!v) fail(`${what} (input ${nameAt(i) || i}) is not a constant PBH can read`);
      return v;
    },
  };
}

function knownValueOfTensor(t: OnnxTensor): KnownValue | null {
  const isInt = isIntType(t.dataType);
  if (!trackable(tensorElementCount(t), isInt)) return null;
  const values = tensorToNumbers(t);
  if (!values) return null;
  return { dims: t.dims.slice(), values, isInt };
}

function isIntType(code: number): boolean {
  return [2, 3, 4, 5, 6, 7, 9, 12, 13].includes(code);
}

export function product(dims: readonly number[]): number {
  let p = 1;
  for (const d of dims) p *= d;
  return p;
}

function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function normAxis(axis: number, rank: number, what = 'axis'): number {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) fail(`${what} ${axis} is out of range for rank ${rank}`);
  return a;
}

export function broadcastShapes(shapes: Shape[]): Shape {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let i = 0; i < rank; i++) {
    let dim = 1;
    for (const s of shapes) {
      const d = s[s.length - rank + i] ?? 1;
      if (d === 1) continue;
      if (dim !== 1 && dim !== d) fail(`shapes ${shapes.map((x) => `[${x.join(',')}]`).join(' and ')} do not broadcast`);
      dim = d;
    }
    out.push(dim);
  }
  return out;
}

function same(shape: Shape): RuleOutput {
  return { shapes: [shape] };
}

const unary: ShapeRule = (_n, io) => same(io.need(0));

const passThroughValue: ShapeRule = (n, io) => {
  const s = io.need(0);
  const v = io.value(0);
  const to = attrInt(n, 'to', 0);
  if (v && n.opType === 'Cast' && isIntType(to)) {
    return { shapes: [s], values: [{ dims: v.dims, values: v.values.map(Math.trunc), isInt: true }] };
  }
  if (v && n.opType === 'Cast' && to !== 0) return { shapes: [s], values: [{ ...v, isInt: false }] };
  return { shapes: [s], values: [v] };
};

const ARITH: Record<string, (a: number, b: number, isInt: boolean) => number> = {
  Add: (a, b) => a + b,
  Sub: (a, b) => a - b,
  Mul: (a, b) => a * b,
  Div: (a, b, isInt) => (isInt ? Math.trunc(a / b) : a / b),
  Max: (a, b) => Math.max(a, b),
  Min: (a, b) => Math.min(a, b),
  Equal: (a, b) => (a === b ? 1 : 0),
  Greater: (a, b) => (a > b ? 1 : 0),
  GreaterOrEqual: (a, b) => (a >= b ? 1 : 0),
  Less: (a, b) => (a < b ? 1 : 0),
  LessOrEqual: (a, b) => (a <= b ? 1 : 0),
  And: (a, b) => (a && b ? 1 : 0),
  Or: (a, b) => (a || b ? 1 : 0),
};
/** Ops whose result is boolean, tracked as integers 0/1. */
const BOOLEAN_RESULT = new Set(['Equal', 'Greater', 'GreaterOrEqual', 'Less', 'LessOrEqual', 'And', 'Or']);

const broadcasting: ShapeRule = (n, io) => {
  const inputs: Shape[] = [];
  for (let i = 0; i < io.count; i++) if (io.present(i)) inputs.push(io.need(i));
  const out = broadcastShapes(inputs);
  const op = ARITH[n.opType];
  const a = io.value(0);
  const b = io.value(1);
  const isInt = (a?.isInt ?? false) && (b?.isInt ?? false);
  if (op && io.count === 2 && a && b && trackable(product(out), isInt)) {
    const ai = broadcastIndexer(a.dims, out);
    const bi = broadcastIndexer(b.dims, out);
    const values = Array.from({ length: product(out) }, (_, k) => op(a.values[ai(k)]!, b.values[bi(k)]!, isInt));
    return { shapes: [out], values: [{ dims: out, values, isInt: isInt || BOOLEAN_RESULT.has(n.opType) }] };
  }
  return same(out);
};

/** Maps a flat index of the broadcast result to the flat index of an operand of shape `dims`. */
function broadcastIndexer(dims: Shape, out: Shape): (k: number) => number {
  const rank = out.length;
  const padded = [...Array(rank - dims.length).fill(1), ...dims] as number[];
  return (k) => {
    let idx = 0;
    let rem = k;
    let stride = 1;
    const coords: number[] = new Array(rank);
    for (let i = rank - 1; i >= 0; i--) {
      coords[i] = rem % out[i]!;
      rem = Math.floor(rem / out[i]!);
    }
    for (let i = rank - 1; i >= 0; i--) {
      const d = padded[i]!;
      idx += (d === 1 ? 0 : coords[i]!) * stride;
      stride *= d;
    }
    return idx;
  };
}

/** Spatial output sizes of Conv and pooling, following the ONNX operator docs (pads, strides, dilations, auto_pad, ceil_mode). */
export function convPoolSpatial(
  n: OnnxNode,
  inSpatial: number[],
  kernel: number[],
  opts: { ceilMode: boolean },
): number[] {
  const k = inSpatial.length;
  if (kernel.length !== k) fail(`kernel rank ${kernel.length} does not match ${k} spatial dims`);
  const strides = attrInts(n, 'strides') ?? Array(k).fill(1);
  const dilations = attrInts(n, 'dilations') ?? Array(k).fill(1);
  const pads = attrInts(n, 'pads') ?? Array(2 * k).fill(0);
  const autoPad = attrString(n, 'auto_pad', 'NOTSET');
  return inSpatial.map((inSize, i) => {
    const s = strides[i] ?? 1;
    const d = dilations[i] ?? 1;
    const eff = (kernel[i]! - 1) * d + 1;
    if (autoPad === 'SAME_UPPER' || autoPad === 'SAME_LOWER') {
      return opts.ceilMode ? Math.ceil(inSize / s) : Math.floor((inSize - 1) / s) + 1;
    }
    if (autoPad === 'VALID') {
      return opts.ceilMode ? Math.ceil((inSize - eff + 1) / s) : Math.floor((inSize - eff) / s) + 1;
    }
    const padBegin = pads[i] ?? 0;
    const padEnd = pads[i + k] ?? 0;
    const span = inSize + padBegin + padEnd - eff;
    if (span < 0) fail(`kernel ${kernel[i]} (dilation ${d}) is larger than padded input ${inSize + padBegin + padEnd}`);
    if (!opts.ceilMode) return Math.floor(span / s) + 1;
    let out = Math.ceil(span / s) + 1;
    // "Sliding windows that would start in the right padded region are ignored."
    if ((out - 1) * s >= inSize + padBegin) out -= 1;
    return out;
  });
}

function convLike(xIndex: number, wIndex: number): ShapeRule {
  return (n, io) => {
    const x = io.need(xIndex);
    const w = io.need(wIndex);
    if (x.length < 3) fail(`input rank ${x.length} is below 3`);
    const kernel = attrInts(n, 'kernel_shape') ?? w.slice(2);
    return same([x[0]!, w[0]!, ...convPoolSpatial(n, x.slice(2), kernel, { ceilMode: false })]);
  };
}

const convTranspose: ShapeRule = (n, io) => {
  const x = io.need(0);
  const w = io.need(1);
  const k = x.length - 2;
  if (k < 1) fail(`input rank ${x.length} is below 3`);
  const group = attrInt(n, 'group', 1);
  const kernel = attrInts(n, 'kernel_shape') ?? w.slice(2);
  const outChannels = w[1]! * group;
  const outputShape = attrInts(n, 'output_shape');
  if (outputShape) return same([x[0]!, outChannels, ...outputShape.slice(-k)]);
  const strides = attrInts(n, 'strides') ?? Array(k).fill(1);
  const dilations = attrInts(n, 'dilations') ?? Array(k).fill(1);
  const pads = attrInts(n, 'pads') ?? Array(2 * k).fill(0);
  const outPad = attrInts(n, 'output_padding') ?? Array(k).fill(0);
  const autoPad = attrString(n, 'auto_pad', 'NOTSET');
  const spatial = x.slice(2).map((inSize, i) => {
    const s = strides[i] ?? 1;
    if (autoPad === 'SAME_UPPER' || autoPad === 'SAME_LOWER') return inSize * s;
    const total = autoPad === 'VALID' ? 0 : (pads[i] ?? 0) + (pads[i + k] ?? 0);
    return s * (inSize - 1) + (outPad[i] ?? 0) + ((kernel[i]! - 1) * (dilations[i] ?? 1) + 1) - total;
  });
  return same([x[0]!, outChannels, ...spatial]);
};

const pool: ShapeRule = (n, io) => {
  const x = io.need(0);
  if (x.length < 3) fail(`input rank ${x.length} is below 3`);
  const kernel = attrInts(n, 'kernel_shape') ?? fail('kernel_shape attribute is missing');
  const out = [x[0]!, x[1]!, ...convPoolSpatial(n, x.slice(2), kernel, { ceilMode: attrInt(n, 'ceil_mode', 0) === 1 })];
  return { shapes: [out, out] };
};

const globalPool: ShapeRule = (_n, io) => {
  const x = io.need(0);
  return same([...x.slice(0, 2), ...x.slice(2).map(() => 1)]);
};

const gemm: ShapeRule = (n, io) => {
  const a = io.need(0);
  const b = io.need(1);
  if (a.length !== 2 || b.length !== 2) fail(`Gemm needs rank-2 inputs, got [${a.join(',')}] and [${b.join(',')}]`);
  const m = attrInt(n, 'transA', 0) ? a[1]! : a[0]!;
  const ka = attrInt(n, 'transA', 0) ? a[0]! : a[1]!;
  const kb = attrInt(n, 'transB', 0) ? b[1]! : b[0]!;
  const nn = attrInt(n, 'transB', 0) ? b[0]! : b[1]!;
  if (ka !== kb) fail(`Gemm inner dims differ: ${ka} vs ${kb}`);
  return same([m, nn]);
};

export function matmulShape(a: Shape, b: Shape): Shape {
  if (a.length === 0 || b.length === 0) fail('MatMul of a scalar');
  const a2 = a.length === 1 ? [1, a[0]!] : a;
  const b2 = b.length === 1 ? [b[0]!, 1] : b;
  const k1 = a2[a2.length - 1]!;
  const k2 = b2[b2.length - 2]!;
  if (k1 !== k2) fail(`MatMul inner dims differ: [${a.join(',')}] x [${b.join(',')}]`);
  const batch = broadcastShapes([a2.slice(0, -2), b2.slice(0, -2)]);
  const out = [...batch];
  if (a.length !== 1) out.push(a2[a2.length - 2]!);
  if (b.length !== 1) out.push(b2[b2.length - 1]!);
  return out;
}

const matmul =
  (ai: number, bi: number): ShapeRule =>
  (_n, io) =>
    same(matmulShape(io.need(ai), io.need(bi)));

const flatten: ShapeRule = (n, io) => {
  const x = io.need(0);
  const axis = attrInt(n, 'axis', 1);
  const a = axis < 0 ? axis + x.length : axis;
  if (a < 0 || a > x.length) fail(`axis ${axis} is out of range for rank ${x.length}`);
  return same([product(x.slice(0, a)), product(x.slice(a))]);
};

const reshape: ShapeRule = (n, io) => {
  const x = io.need(0);
  const target = attrInts(n, 'shape') ?? io.needValue(1, 'the target shape').values;
  const allowZero = attrInt(n, 'allowzero', 0) === 1;
  const out = target.map((d, i) => (d === 0 && !allowZero ? (x[i] ?? fail(`shape dim ${i} copies a missing input dim`)) : d));
  const minus = out.filter((d) => d === -1).length;
  if (minus > 1) fail('more than one -1 in the target shape');
  const total = product(x);
  if (minus === 1) {
    const known = product(out.filter((d) => d !== -1));
    if (known === 0 || total % known !== 0) fail(`cannot infer -1: ${total} elements into [${target.join(',')}]`);
    out[out.indexOf(-1)] = total / known;
  }
  if (product(out) !== total) fail(`cannot reshape [${x.join(',')}] to [${target.join(',')}]`);
  const v = io.value(0);
  return { shapes: [out], values: [v ? { ...v, dims: out } : null] };
};

const concat: ShapeRule = (n, io) => {
  const ins: Shape[] = [];
  for (let i = 0; i < io.count; i++) if (io.present(i)) ins.push(io.need(i));
  const first = ins[0] ?? fail('no inputs');
  const axis = normAxis(attrInt(n, 'axis', 0), first.length);
  const out = first.slice();
  out[axis] = ins.reduce((acc, s) => acc + s[axis]!, 0);
  const vals = ins.map((_, i) => io.value(i));
  if (vals.every((v): v is KnownValue => v !== null)) {
    const outer = product(first.slice(0, axis));
    const values: number[] = [];
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < ins.length; i++) {
        const chunk = product(ins[i]!.slice(axis));
        values.push(...vals[i]!.values.slice(o * chunk, (o + 1) * chunk));
      }
    }
    return { shapes: [out], values: [{ dims: out, values, isInt: vals.every((v) => v.isInt) }] };
  }
  return same(out);
};

/** Row-major strides of a shape. */
function stridesOf(shape: Shape): number[] {
  const st = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= shape[i]!;
  }
  return st;
}

/** Values of a small tensor read at out-index -> source-index (transposes and slices of shape vectors, pads). */
function gatherValues(v: KnownValue, out: Shape, source: (coords: number[]) => number): KnownValue {
  const count = product(out);
  const values: number[] = new Array(count);
  const coords = new Array<number>(out.length).fill(0);
  for (let k = 0; k < count; k++) {
    values[k] = v.values[source(coords)]!;
    for (let i = out.length - 1; i >= 0; i--) {
      if (++coords[i]! < out[i]!) break;
      coords[i] = 0;
    }
  }
  return { dims: out, values, isInt: v.isInt };
}

const transpose: ShapeRule = (n, io) => {
  const x = io.need(0);
  const perm = attrInts(n, 'perm') ?? x.map((_, i) => x.length - 1 - i);
  if (perm.length !== x.length) fail(`perm has ${perm.length} entries for rank ${x.length}`);
  const out = perm.map((p) => x[p] ?? fail(`perm entry ${p} is out of range`));
  const v = io.value(0);
  if (!v) return same(out);
  const st = stridesOf(x);
  return { shapes: [out], values: [gatherValues(v, out, (c) => c.reduce((a, ci, i) => a + ci * st[perm[i]!]!, 0))] };
};

function axesOf(n: OnnxNode, io: NodeInputs, inputIndex: number): number[] | null {
  const attr = attrInts(n, 'axes');
  if (attr) return attr;
  if (!io.present(inputIndex)) return null;
  return io.needValue(inputIndex, 'axes').values;
}

const squeeze: ShapeRule = (n, io) => {
  const x = io.need(0);
  const axes = axesOf(n, io, 1);
  const drop = new Set(axes ? axes.map((a) => normAxis(a, x.length)) : x.flatMap((d, i) => (d === 1 ? [i] : [])));
  const out = x.filter((_, i) => !drop.has(i));
  const v = io.value(0);
  return { shapes: [out], values: [v ? { ...v, dims: out } : null] };
};

const unsqueeze: ShapeRule = (n, io) => {
  const x = io.need(0);
  const axes = axesOf(n, io, 1) ?? fail('axes are missing');
  const rank = x.length + axes.length;
  const at = new Set(axes.map((a) => normAxis(a, rank)));
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < rank; i++) out.push(at.has(i) ? 1 : x[j++]!);
  const v = io.value(0);
  return { shapes: [out], values: [v ? { ...v, dims: out } : null] };
};

const shapeOp: ShapeRule = (n, io) => {
  const x = io.need(0);
  const r = x.length;
  const clampIdx = (v: number): number => Math.min(Math.max(v < 0 ? v + r : v, 0), r);
  const start = clampIdx(attrInt(n, 'start', 0));
  const end = clampIdx(attrInt(n, 'end', r));
  const values = x.slice(start, Math.max(start, end));
  return { shapes: [[values.length]], values: [{ dims: [values.length], values, isInt: true }] };
};

const size: ShapeRule = (_n, io) => {
  const x = io.need(0);
  return { shapes: [[]], values: [{ dims: [], values: [product(x)], isInt: true }] };
};

const gather: ShapeRule = (n, io) => {
  const data = io.need(0);
  const idx = io.need(1);
  const axis = normAxis(attrInt(n, 'axis', 0), data.length);
  const out = [...data.slice(0, axis), ...idx, ...data.slice(axis + 1)];
  const dv = io.value(0);
  const iv = io.value(1);
  if (dv && iv && trackable(product(out), dv.isInt)) {
    const outer = product(data.slice(0, axis));
    const inner = product(data.slice(axis + 1));
    const values: number[] = [];
    for (let o = 0; o < outer; o++) {
      for (const raw of iv.values) {
        const k = raw < 0 ? raw + data[axis]! : raw;
        const base = (o * data[axis]! + k) * inner;
        values.push(...dv.values.slice(base, base + inner));
      }
    }
    return { shapes: [out], values: [{ dims: out, values, isInt: dv.isInt }] };
  }
  return same(out);
};

function constantTensorValue(n: OnnxNode): { dims: number[]; values: number[] | null; isInt: boolean } {
  const t = attrTensor(n, 'value');
  if (t) {
    const isInt = isIntType(t.dataType);
    return { dims: t.dims.slice(), values: trackable(tensorElementCount(t), isInt) ? tensorToNumbers(t) : null, isInt };
  }
  const a = n.attributes;
  if (a['value_float']?.type === 'float') return { dims: [], values: [a['value_float'].value], isInt: false };
  if (a['value_int']?.type === 'int') return { dims: [], values: [a['value_int'].value], isInt: true };
  if (a['value_floats']?.type === 'floats') {
    return { dims: [a['value_floats'].value.length], values: a['value_floats'].value, isInt: false };
  }
  if (a['value_ints']?.type === 'ints') return { dims: [a['value_ints'].value.length], values: a['value_ints'].value, isInt: true };
  if (a['value_string']?.type === 'string') return { dims: [], values: null, isInt: false };
  if (a['value_strings']?.type === 'strings') return { dims: [a['value_strings'].value.length], values: null, isInt: false };
  fail('Constant without a value attribute PBH can read');
}

const constant: ShapeRule = (n) => {
  const c = constantTensorValue(n);
  return { shapes: [c.dims], values: [c.values ? { dims: c.dims, values: c.values, isInt: c.isInt } : null] };
};

const constantOfShape: ShapeRule = (n, io) => {
  const shape = io.needValue(0, 'the shape').values;
  const fill = attrTensor(n, 'value');
  const fillValue = fill ? (tensorToNumbers(fill)?.[0] ?? 0) : 0;
  const isInt = fill ? isIntType(fill.dataType) : false;
  const count = product(shape);
  const values = trackable(count, isInt) ? { dims: shape, values: Array(count).fill(fillValue), isInt } : null;
  return { shapes: [shape], values: [values] };
};

const pad: ShapeRule = (n, io) => {
  const x = io.need(0);
  const pads = attrInts(n, 'pads') ?? attrInts(n, 'paddings') ?? io.needValue(1, 'pads').values;
  const axesIn = io.count > 3 && io.present(3) ? io.needValue(3, 'axes').values : null;
  const axes = axesIn ? axesIn.map((a) => normAxis(a, x.length)) : x.map((_, i) => i);
  if (pads.length !== 2 * axes.length) fail(`pads has ${pads.length} entries for ${axes.length} axes`);
  const out = x.slice();
  axes.forEach((a, i) => (out[a] = out[a]! + pads[i]! + pads[i + axes.length]!));
  return same(out);
};

const slice: ShapeRule = (n, io) => {
  const x = io.need(0);
  const fromAttr = attrInts(n, 'starts') !== null;
  const starts = fromAttr ? attrInts(n, 'starts')! : io.needValue(1, 'starts').values;
  const ends = fromAttr ? (attrInts(n, 'ends') ?? fail('ends are missing')) : io.needValue(2, 'ends').values;
  const axesRaw = fromAttr ? attrInts(n, 'axes') : io.present(3) ? io.needValue(3, 'axes').values : null;
  const steps = !fromAttr && io.present(4) ? io.needValue(4, 'steps').values : starts.map(() => 1);
  const axes = (axesRaw ?? starts.map((_, i) => i)).map((a) => normAxis(a, x.length));
  const out = x.slice();
  const ranges = x.map((d) => ({ start: 0, step: 1, count: d }));
  axes.forEach((axis, i) => {
    const dim = x[axis]!;
    const step = steps[i] ?? 1;
    if (step === 0) fail('slice step 0');
    let s = starts[i]!;
    let e = ends[i]!;
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    let count: number;
    if (step > 0) {
      s = Math.min(Math.max(s, 0), dim);
      e = Math.min(Math.max(e, 0), dim);
      count = Math.max(0, Math.ceil((e - s) / step));
    } else {
      s = Math.min(Math.max(s, -1), dim - 1);
      e = Math.min(Math.max(e, -1), dim - 1);
      count = Math.max(0, Math.ceil((s - e) / -step));
    }
    out[axis] = count;
    ranges[axis] = { start: s, step, count };
  });
  const v = io.value(0);
  if (v) {
    const st = stridesOf(x);
    return { shapes: [out], values: [gatherValues(v, out, (c) => c.reduce((a, ci, i) => a + (ranges[i]!.start + ci * ranges[i]!.step) * st[i]!, 0))] };
  }
  return same(out);
};

const split: ShapeRule = (n, io) => {
  const x = io.need(0);
  const axis = normAxis(attrInt(n, 'axis', 0), x.length);
  const parts = n.outputs.length;
  const given = attrInts(n, 'split') ?? (io.present(1) ? io.needValue(1, 'split').values : null);
  let sizes: number[];
  if (given) sizes = given;
  else {
    const dim = x[axis]!;
    const chunk = Math.ceil(dim / parts);
    sizes = Array.from({ length: parts }, (_, i) => Math.max(0, Math.min(chunk, dim - i * chunk)));
  }
  return { shapes: sizes.map((s) => x.map((d, i) => (i === axis ? s : d))) };
};

const reduce: ShapeRule = (n, io) => {
  const x = io.need(0);
  const axes = axesOf(n, io, 1);
  const keep = attrInt(n, 'keepdims', 1) === 1;
  const noopEmpty = attrInt(n, 'noop_with_empty_axes', 0) === 1;
  if ((!axes || axes.length === 0) && noopEmpty) return same(x);
  const set = new Set((axes && axes.length > 0 ? axes : x.map((_, i) => i)).map((a) => normAxis(a, x.length)));
  return same(keep ? x.map((d, i) => (set.has(i) ? 1 : d)) : x.filter((_, i) => !set.has(i)));
};

const argReduce: ShapeRule = (n, io) => {
  const x = io.need(0);
  const axis = normAxis(attrInt(n, 'axis', 0), x.length);
  const keep = attrInt(n, 'keepdims', 1) === 1;
  return same(keep ? x.map((d, i) => (i === axis ? 1 : d)) : x.filter((_, i) => i !== axis));
};

const expand: ShapeRule = (_n, io) => same(broadcastShapes([io.need(0), io.needValue(1, 'the target shape').values]));

const tile: ShapeRule = (_n, io) => {
  const x = io.need(0);
  const reps = io.needValue(1, 'repeats').values;
  return same(x.map((d, i) => d * (reps[i] ?? 1)));
};

const resize: ShapeRule = (n, io) => {
  const x = io.need(0);
  // Upsample (opset 7-9) has scales as attribute or input 1; Resize has roi at 1, scales at 2, sizes at 3 (opset 11+).
  if (n.opType === 'Upsample') {
    const scales = attrFloats(n, 'scales') ?? io.needValue(1, 'scales').values;
    return same(x.map((d, i) => Math.floor(d * (scales[i] ?? 1))));
  }
  const sizes = io.count > 3 && io.present(3) ? io.value(3) : null;
  if (sizes && sizes.values.length > 0) return same(sizes.values.slice());
  const scalesIdx = io.count === 2 ? 1 : 2;
  const scales = io.needValue(scalesIdx, 'scales').values;
  if (scales.length !== x.length) fail(`scales has ${scales.length} entries for rank ${x.length}`);
  return same(x.map((d, i) => Math.floor(d * scales[i]!)));
};


const topK: ShapeRule = (n, io) => {
  const x = io.need(0);
  const axis = normAxis(attrInt(n, 'axis', -1), x.length);
  const k = attrInt(n, 'k', null) ?? io.needValue(1, 'k').values[0] ?? fail('k is empty');
  const out = x.map((d, i) => (i === axis ? k : d));
  return { shapes: [out, out] };
};

const depthToSpace: ShapeRule = (n, io) => {
  const x = io.need(0);
  const b = attrInt(n, 'blocksize', 1);
  if (x.length !== 4) fail('needs rank 4');
  if (n.opType === 'DepthToSpace') return same([x[0]!, x[1]! / (b * b), x[2]! * b, x[3]! * b]);
  return same([x[0]!, x[1]! * b * b, x[2]! / b, x[3]! / b]);
};

const batchNorm: ShapeRule = (_n, io) => {
  const x = io.need(0);
  const c = x[1] ?? 1;
  return { shapes: [x, [c], [c], [c], [c]] };
};

const dropout: ShapeRule = (_n, io) => {
  const x = io.need(0);
  return { shapes: [x, x] };
};

const layerNorm: ShapeRule = (n, io) => {
  const x = io.need(0);
  const axis = normAxis(attrInt(n, 'axis', -1), x.length);
  const stat = x.map((d, i) => (i < axis ? d : 1));
  return { shapes: [x, stat, stat] };
};

const dynamicQuantize: ShapeRule = (_n, io) => ({ shapes: [io.need(0), [], []] });

const range: ShapeRule = (_n, io) => {
  const start = io.needValue(0, 'start').values[0]!;
  const limit = io.needValue(1, 'limit').values[0]!;
  const delta = io.needValue(2, 'delta').values[0]!;
  const count = Math.max(Math.ceil((limit - start) / delta), 0);
  return same([count]);
};

const einsum: ShapeRule = (n, io) => {
  const eq = attrString(n, 'equation', '').replace(/\s/g, '');
  const [lhs, rhs] = eq.split('->');
  if (!lhs || rhs === undefined || eq.includes('...')) fail(`einsum equation "${eq}" is not supported`);
  const sizes = new Map<string, number>();
  lhs.split(',').forEach((term, i) => {
    const s = io.need(i);
    if (term.length !== s.length) fail(`einsum term ${term} does not match rank ${s.length}`);
    [...term].forEach((c, j) => sizes.set(c, Math.max(sizes.get(c) ?? 1, s[j]!)));
  });
  return same([...rhs].map((c) => sizes.get(c) ?? fail(`einsum output label ${c} is unknown`)));
};

const not: ShapeRule = (_n, io) => {
  const x = io.need(0);
  const v = io.value(0);
  return { shapes: [x], values: [v ? { dims: v.dims, values: v.values.map((b) => (b ? 0 : 1)), isInt: true } : null] };
};

/**
 * LSTM, GRU and RNN (opset 7+): X is [seq, batch, input] ([batch, seq, input] with layout 1), W is
 * [directions, gates x hidden, input]; Y is [seq, directions, batch, hidden] ([batch, seq, directions, hidden]),
 * Y_h and Y_c [directions, batch, hidden] ([batch, directions, hidden]).
 */
const recurrent: ShapeRule = (n, io) => {
  const x = io.need(0);
  const w = io.need(1);
  if (x.length !== 3 || w.length !== 3) fail(`X and W must have rank 3 (got [${x.join(',')}] and [${w.join(',')}])`);
  const layout = attrInt(n, 'layout', 0);
  const [seq, batch] = layout === 1 ? [x[1]!, x[0]!] : [x[0]!, x[1]!];
  const dirs = w[0]!;
  const gates = n.opType === 'LSTM' ? 4 : n.opType === 'GRU' ? 3 : 1;
  const hidden = attrInt(n, 'hidden_size', null) ?? w[1]! / gates;
  const y = layout === 1 ? [batch, seq, dirs, hidden] : [seq, dirs, batch, hidden];
  const state = layout === 1 ? [batch, dirs, hidden] : [dirs, batch, hidden];
  return { shapes: [y, state, state] };
};

const UNARY_OPS = [
  'Abs', 'Acos', 'Acosh', 'Asin', 'Asinh', 'Atan', 'Atanh', 'Ceil', 'Celu', 'Cos', 'Cosh', 'Elu', 'Erf', 'Exp',
  'Floor', 'Gelu', 'HardSigmoid', 'HardSwish', 'IsInf', 'IsNaN', 'LeakyRelu', 'Log', 'LogSoftmax', 'Softmax',
  'Hardmax', 'Mish', 'Neg', 'Not', 'Reciprocal', 'Relu', 'Round', 'Selu', 'Shrink', 'Sigmoid', 'Sign', 'Sin',
  'Sinh', 'Softplus', 'Softsign', 'Sqrt', 'Tan', 'Tanh', 'ThresholdedRelu', 'Clip', 'LRN', 'InstanceNormalization',
  'MeanVarianceNormalization', 'LpNormalization', 'QuantizeLinear', 'DequantizeLinear', 'CumSum', 'Trilu',
  'BitwiseNot', 'GroupNormalization', 'RMSNormalization',
];

const BROADCAST_OPS = [
  'Add', 'Sub', 'Mul', 'Div', 'Pow', 'Mod', 'PRelu', 'And', 'Or', 'Xor', 'Equal', 'Greater', 'GreaterOrEqual',
  'Less', 'LessOrEqual', 'BitShift', 'Max', 'Min', 'Sum', 'Mean', 'Where', 'BitwiseAnd', 'BitwiseOr', 'BitwiseXor',
];

const REDUCE_OPS = [
  'ReduceMean', 'ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum',
  'ReduceLogSumExp', 'ReduceSumSquare',
];

const RULES: Record<string, ShapeRule> = {
  ...Object.fromEntries(UNARY_OPS.map((op) => [op, unary])),
  ...Object.fromEntries(BROADCAST_OPS.map((op) => [op, broadcasting])),
  ...Object.fromEntries(REDUCE_OPS.map((op) => [op, reduce])),
  Identity: passThroughValue,
  Cast: passThroughValue,
  CastLike: passThroughValue,
  BatchNormalization: batchNorm,
  Dropout: dropout,
  LayerNormalization: layerNorm,
  DynamicQuantizeLinear: dynamicQuantize,
  Conv: convLike(0, 1),
  ConvInteger: convLike(0, 1),
  QLinearConv: convLike(0, 3),
  ConvTranspose: convTranspose,
  MaxPool: pool,
  AveragePool: pool,
  LpPool: pool,
  GlobalAveragePool: globalPool,
  GlobalMaxPool: globalPool,
  GlobalLpPool: globalPool,
  Gemm: gemm,
  MatMul: matmul(0, 1),
  MatMulInteger: matmul(0, 1),
  QLinearMatMul: matmul(0, 3),
  Flatten: flatten,
  Reshape: reshape,
  Concat: concat,
  Transpose: transpose,
  Squeeze: squeeze,
  Unsqueeze: unsqueeze,
  Shape: shapeOp,
  Size: size,
  Gather: gather,
  Constant: constant,
  ConstantOfShape: constantOfShape,
  Pad: pad,
  Slice: slice,
  Split: split,
  ArgMax: argReduce,
  ArgMin: argReduce,
  Expand: expand,
  Tile: tile,
  Resize: resize,
  Upsample: resize,
  TopK: topK,
  DepthToSpace: depthToSpace,
  SpaceToDepth: depthToSpace,
  Range: range,
  Einsum: einsum,
  Not: not,
  LSTM: recurrent,
  GRU: recurrent,
  RNN: recurrent,
};

/** ONNX Runtime's contrib ops that quantization tools write (onnxruntime.quantization's dynamic LSTM). */
const CONTRIB_RULES: Record<string, ShapeRule> = {
  'com.microsoft.DynamicQuantizeLSTM': recurrent,
};

/** Op types (default ONNX domain) with a shape rule. */
export const SHAPE_RULE_OPS: readonly string[] = Object.keys(RULES).sort();

