/**
 * Floating-point operation counts from inferred shapes.
 *
 * Convention (the usual one in papers and in fvcore/thop "x2" figures):
 * - one multiply-add is 2 FLOPs; Conv/ConvTranspose/Gemm/MatMul count 2 x MACs, plus 1 per output element for a bias
 *   (Gemm's C input, Conv's B input);
 * - BatchNormalization (inference) is 2 per element (x * scale' + shift' after folding mean/var);
 * - elementwise ops (unary activations, Add/Sub/Mul/Div, Clip, ...) are 1 per output element, whatever their
 *   transcendental cost; variadic Sum/Max/Min are (inputs - 1) per element, Mean adds 1 for the division;
 * - pooling is kernel-size per output element (GlobalXPool: the spatial size), AveragePool adds 1 for the division;
 * - Softmax/LogSoftmax 3 per element (exp, sum, divide), LRN 2 x size + 3 per element, normalisations 5 per element;
 * - reductions are 1 per input element; Einsum one multiply-add per point of its index space;
 * - data movement (Reshape, Transpose, Concat, Gather, Pad, ...) is 0.
 * - LSTM/GRU/RNN: per time step, direction and sample, 2 x gates x hidden x (input + hidden) for the two matmuls,
 *   2 x gates x hidden for the biases when given, and the gates' elementwise work (LSTM 9, GRU 8, RNN 1 per hidden unit);
 * - If counts the branch its condition takes when PBH knows the condition (a constant input), else the costlier
 *   branch, said so in `notes`; Loop counts its body times the trip count when that is a constant.
 * Integer kernels (ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul) use the same formulas but are integer OPs,
 * counted apart (`intOps`): a quantized model's work is not FLOPs. Figures are per inference at the inferred batch;
 * callers divide by the batch.
 */
import { attrInt, attrInts, attrString } from './onnx-access.js';
import type { OnnxGraph, OnnxModel, OnnxNode } from './onnx-reader.js';
import { product, qualifiedOpType, type Shape, type ShapeInference } from './shapes.js';

export const FLOPS_CONVENTION =
  '1 multiply-add = 2 FLOPs; bias adds and elementwise ops count 1 per output element; BatchNormalization 2 per element; pooling counts kernel size per output element; data movement counts 0';

export interface NodeFlops {
  index: number;
  name: string;
  opType: string;
  /** null when the node's shapes are unknown or PBH has no FLOPs rule for its op. */
  flops: number | null;
  /** Integer OPs of the node (integer kernels, inside an If/Loop too). */
  intOps: number;
}

export interface FlopsResult {
  /** Sum over nodes whose FLOPs are known, at the inferred batch. */
  total: number;
  byOpType: Record<string, number>;
  perNode: NodeFlops[];
  /** Integer OPs (INTEGER_OPS), counted apart from FLOPs: a quantized model's work. */
  intOps: number;
  intOpsByOpType: Record<string, number>;
  /** Nodes left out of the total; when any, the total is a lower bound. */
  uncounted: { node: string; opType: string; reason: string }[];
  lowerBound: boolean;
  /** What the count chose: the If branch taken (or the costlier one), a Loop's trip count. */
  notes: string[];
}

interface FlopsInputs {
  shape(i: number): Shape | null;
  present(i: number): boolean;
  count: number;
}

class FlopsRuleError extends Error {}

function need(s: Shape | null, what: string): Shape {
  if (!s) throw new FlopsRuleError(`shape of ${what} is unknown`);
  return s;
}

type FlopsRule = (n: OnnxNode, inputs: FlopsInputs, outputs: (Shape | null)[]) => number;

const perOutputElement =
  (k: number): FlopsRule =>
  (_n, _in, out) =>
    k * product(need(out[0] ?? null, 'output 0'));

const zero: FlopsRule = () => 0;

function convFlops(wIndex: number, biasIndex: number): FlopsRule {
  return (_n, io, out) => {
    const w = need(io.shape(wIndex), 'the weight');
    const y = need(out[0] ?? null, 'output 0');
    // W is [M, C/group, k...]: every output element reduces over C/group x prod(k) inputs.
    const macsPerOutput = product(w.slice(1));
    const bias = io.present(biasIndex) ? product(y) : 0;
    return 2 * product(y) * macsPerOutput + bias;
  };
}

const convTransposeFlops: FlopsRule = (_n, io, out) => {
  const x = need(io.shape(0), 'input 0');
  const w = need(io.shape(1), 'the weight');
  const y = need(out[0] ?? null, 'output 0');
  // Every input element scatters into (M/group) x prod(k) outputs: W is [C, M/group, k...].
  const macs = product(x) * product(w.slice(1));
  return 2 * macs + (io.present(2) ? product(y) : 0);
};

const gemmFlops: FlopsRule = (n, io, out) => {
  const a = need(io.shape(0), 'A');
  const y = need(out[0] ?? null, 'output 0');
  const k = attrInt(n, 'transA', 0) ? a[0]! : a[1]!;
  return 2 * product(y) * k + (io.present(2) ? product(y) : 0);
};

function matmulFlops(ai: number): FlopsRule {
  return (_n, io, out) => {
    const a = need(io.shape(ai), 'A');
    const y = need(out[0] ?? null, 'output 0');
    const k = a[a.length - 1]!;
    return 2 * product(y) * k;
  };
}

const poolFlops: FlopsRule = (n, _io, out) => {
  const kernel = attrInts(n, 'kernel_shape') ?? [];
  const y = need(out[0] ?? null, 'output 0');
  return product(y) * (product(kernel) + (n.opType === 'AveragePool' ? 1 : 0));
};

const globalPoolFlops: FlopsRule = (n, io) => {
  const x = need(io.shape(0), 'input 0');
  // Every input element is read once; the average adds one division per channel.
  return product(x) + (n.opType === 'GlobalAveragePool' ? product(x.slice(0, 2)) : 0);
};

const variadicFlops: FlopsRule = (n, io, out) => {
  let inputs = 0;
  for (let i = 0; i < io.count; i++) if (io.present(i)) inputs++;
  const y = need(out[0] ?? null, 'output 0');
  return product(y) * (Math.max(inputs - 1, 0) + (n.opType === 'Mean' ? 1 : 0));
};

const lrnFlops: FlopsRule = (n, _io, out) => {
  const size = attrInt(n, 'size', 1);
  return product(need(out[0] ?? null, 'output 0')) * (2 * size + 3);
};

const reduceFlops: FlopsRule = (_n, io) => product(need(io.shape(0), 'input 0'));

/** One multiply-add per point of the full index space for a contraction of two or more operands. */
const einsumFlops: FlopsRule = (n, io) => {
  const eq = attrString(n, 'equation', '').replace(/\s/g, '');
  const [lhs, rhs = ''] = eq.split('->');
  if (!lhs || eq.includes('...')) throw new FlopsRuleError(`einsum equation "${eq}" is not supported`);
  const sizes = new Map<string, number>();
  const terms = lhs.split(',');
  terms.forEach((term, i) => {
    const s = need(io.shape(i), `input ${i}`);
    [...term].forEach((c, j) => sizes.set(c, Math.max(sizes.get(c) ?? 1, s[j] ?? 1)));
  });
  const space = product([...sizes.values()]);
  if (terms.length >= 2) return 2 * space * (terms.length - 1);
  return [...sizes.keys()].some((c) => !rhs.includes(c)) ? space : 0;
};

const recurrentFlops: FlopsRule = (n, io) => {
  const x = need(io.shape(0), 'X');
  const w = need(io.shape(1), 'W');
  const layout = attrInt(n, 'layout', 0);
  const [seq, batch] = layout === 1 ? [x[1]!, x[0]!] : [x[0]!, x[1]!];
  const input = x[2]!;
  const dirs = w[0]!;
  const gates = n.opType === 'LSTM' ? 4 : n.opType === 'GRU' ? 3 : 1;
  const hidden = attrInt(n, 'hidden_size', null) ?? w[1]! / gates;
  const elementwise = n.opType === 'LSTM' ? 9 : n.opType === 'GRU' ? 8 : 1;
  const perStep = 2 * gates * hidden * (input + hidden) + (io.present(3) ? 2 * gates * hidden : 0) + elementwise * hidden;
  return seq * dirs * batch * perStep;
};

const ELEMENTWISE = [
  'Abs', 'Acos', 'Acosh', 'Asin', 'Asinh', 'Atan', 'Atanh', 'Ceil', 'Celu', 'Cos', 'Cosh', 'Elu', 'Erf', 'Exp',
  'Floor', 'Gelu', 'HardSigmoid', 'HardSwish', 'LeakyRelu', 'Log', 'Mish', 'Neg', 'Reciprocal', 'Relu', 'Round',
  'Selu', 'Shrink', 'Sigmoid', 'Sign', 'Sin', 'Sinh', 'Softplus', 'Softsign', 'Sqrt', 'Tan', 'Tanh',
  'ThresholdedRelu', 'Clip', 'Add', 'Sub', 'Mul', 'Div', 'Pow', 'Mod', 'PRelu', 'Where', 'Equal', 'Greater',
  'GreaterOrEqual', 'Less', 'LessOrEqual', 'And', 'Or', 'Xor', 'Not', 'QuantizeLinear', 'DequantizeLinear', 'CumSum',
  'IsInf', 'IsNaN', 'BitShift', 'BitwiseAnd', 'BitwiseOr', 'BitwiseXor', 'BitwiseNot', 'Resize', 'Upsample',
];

const DATA_MOVEMENT = [
  'Identity', 'Dropout', 'Reshape', 'Flatten', 'Squeeze', 'Unsqueeze', 'Transpose', 'Concat', 'Split', 'Slice',
  'Gather', 'Shape', 'Size', 'Constant', 'ConstantOfShape', 'Cast', 'CastLike', 'Pad', 'Expand', 'Tile',
  'DepthToSpace', 'SpaceToDepth', 'Range', 'Trilu',
];

const REDUCE = [
  'ReduceMean', 'ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum',
  'ReduceLogSumExp', 'ReduceSumSquare', 'ArgMax', 'ArgMin', 'TopK',
];

const RULES: Record<string, FlopsRule> = {
  ...Object.fromEntries(ELEMENTWISE.map((op) => [op, perOutputElement(1)])),
  ...Object.fromEntries(DATA_MOVEMENT.map((op) => [op, zero])),
  ...Object.fromEntries(REDUCE.map((op) => [op, reduceFlops])),
  Conv: convFlops(1, 2),
  ConvInteger: convFlops(1, -1),
  QLinearConv: convFlops(3, 8),
  ConvTranspose: convTransposeFlops,
  Gemm: gemmFlops,
  MatMul: matmulFlops(0),
  MatMulInteger: matmulFlops(0),
  QLinearMatMul: matmulFlops(0),
  BatchNormalization: perOutputElement(2),
  InstanceNormalization: perOutputElement(5),
  LayerNormalization: perOutputElement(5),
  GroupNormalization: perOutputElement(5),
  MeanVarianceNormalization: perOutputElement(5),
  LpNormalization: perOutputElement(2),
  RMSNormalization: perOutputElement(4),
  DynamicQuantizeLinear: perOutputElement(1),
  Softmax: perOutputElement(3),
  LogSoftmax: perOutputElement(3),
  Hardmax: perOutputElement(1),
  LRN: lrnFlops,
  MaxPool: poolFlops,
  AveragePool: poolFlops,
  LpPool: poolFlops,
  GlobalAveragePool: globalPoolFlops,
  GlobalMaxPool: globalPoolFlops,
  GlobalLpPool: globalPoolFlops,
  Einsum: einsumFlops,
  Sum: variadicFlops,
  Max: variadicFlops,
  Min: variadicFlops,
  Mean: variadicFlops,
  LSTM: recurrentFlops,
  GRU: recurrentFlops,
  RNN: recurrentFlops,
};

/** ONNX Runtime contrib ops with a rule: the dynamically quantized LSTM (int8 matmuls, so integer OPs). */
const CONTRIB_RULES: Record<string, FlopsRule> = {
  'com.microsoft.DynamicQuantizeLSTM': recurrentFlops,
};

/** Op types (default ONNX domain) with a FLOPs rule. */
export const FLOPS_RULE_OPS: readonly string[] = Object.keys(RULES).sort();

/** Integer kernels: their operations are counted as integer OPs, apart from FLOPs. */
export const INTEGER_OPS: readonly string[] = ['ConvInteger', 'MatMulInteger', 'QLinearConv', 'QLinearMatMul', 'com.microsoft.DynamicQuantizeLSTM'];

export function countFlops(model: OnnxModel, shapes: ShapeInference): FlopsResult {
  const perNode: NodeFlops[] = [];
  const byOpType: Record<string, number> = {};
  const intByOpType: Record<string, number> = {};
  const uncounted: FlopsResult['uncounted'] = [];
  const notes: string[] = [];
  // Shape inference knows the root cause (e.g. which input was unknown); the FLOPs rule only sees the symptom.
  const shapeReasons = new Map(shapes.unresolved.map((u) => [u.node, u.reason]));
  const shapeOf = (tensor: string | undefined): Shape | null =>
    tensor === undefined || tensor === '' ? null : (shapes.shapes.get(tensor) ?? null);

  /** FLOPs and integer OPs of one node; an If or Loop counts its bodies. Records per op type when `record`. */
  const countNode = (node: OnnxNode, name: string): { flops: number | null; intOps: number } => {
    const opType = qualifiedOpType(node);
    if (node.domain === '' && (node.opType === 'If' || node.opType === 'Loop')) return countControl(node, name);
    const rule = node.domain === '' ? RULES[node.opType] : CONTRIB_RULES[opType];
    if (!rule) {
      uncounted.push({ node: name, opType, reason: `no FLOPs rule for ${opType}` });
      return { flops: null, intOps: 0 };
    }
    const inputs: FlopsInputs = {
      count: node.inputs.length,
      present: (i) => (node.inputs[i] ?? '') !== '',
      shape: (i) => shapeOf(node.inputs[i]),
    };
    try {
      const n = rule(node, inputs, node.outputs.map(shapeOf));
      if (INTEGER_OPS.includes(opType)) {
        intByOpType[opType] = (intByOpType[opType] ?? 0) + n;
        return { flops: 0, intOps: n };
      }
      byOpType[opType] = (byOpType[opType] ?? 0) + n;
      return { flops: n, intOps: 0 };
    } catch (err) {
      const message = err instanceof FlopsRuleError ? err.message : `PBH's ${node.opType} FLOPs rule failed: ${String(err)}`;
      uncounted.push({ node: name, opType, reason: shapeReasons.get(name) ?? message });
      return { flops: null, intOps: 0 };
    }
  };

  const countGraph = (g: OnnxGraph): { flops: number; intOps: number } => {
    let flops = 0;
    let intOps = 0;
    for (const n of g.nodes) {
      const c = countNode(n, shapes.subgraphNames.get(n) ?? n.name);
      flops += c.flops ?? 0;
      intOps += c.intOps;
    }
    return { flops, intOps };
  };

  /** The branch taken when the condition is known; else the costlier branch, said so. A Loop: body x trip count. */
  const countControl = (node: OnnxNode, name: string): { flops: number; intOps: number } => {
    const choice = shapes.branches.get(node);
    const graphAttr = (attr: string): OnnxGraph | null => {
      const a = node.attributes[attr];
      return a?.type === 'graph' ? a.value : null;
    };
    if (node.opType === 'If') {
      const taken = choice?.taken ?? null;
      if (taken) {
        const g = graphAttr(taken);
        notes.push(`${name}: counted the ${taken.replace('_branch', '')} branch, the one its condition takes at these inputs`);
        return g ? countGraph(g) : { flops: 0, intOps: 0 };
      }
      const both = (['then_branch', 'else_branch'] as const).map((b) => {
        const g = graphAttr(b);
        return g ? countGraph(g) : { flops: 0, intOps: 0 };
      });
      const worst = both[0]!.flops + both[0]!.intOps >= both[1]!.flops + both[1]!.intOps ? 0 : 1;
      notes.push(`${name}: its condition is not known statically; counted the costlier branch (${worst === 0 ? 'then' : 'else'})`);
      return both[worst]!;
    }
    const body = graphAttr('body');
    if (!body) return { flops: 0, intOps: 0 };
    const once = countGraph(body);
    const trips = choice?.trips ?? null;
    if (trips === null) {
      uncounted.push({ node: name, opType: 'Loop', reason: 'its trip count is not known statically: its body is counted once' });
      return once;
    }
    notes.push(`${name}: counted its body ${trips} times (the trip count)`);
    return { flops: once.flops * trips, intOps: once.intOps * trips };
  };

  let total = 0;
  let intTotal = 0;
  for (const index of shapes.order) {
    const node = model.graph.nodes[index]!;
    const c = countNode(node, shapes.nodeNames[index]!);
    if (c.flops !== null) total += c.flops;
    intTotal += c.intOps;
    perNode.push({ index, name: shapes.nodeNames[index]!, opType: qualifiedOpType(node), flops: c.flops, intOps: c.intOps });
  }
  return { total, byOpType, intOps: intTotal, intOpsByOpType: intByOpType, perNode, uncounted, lowerBound: uncounted.length > 0, notes };
}
