/**
 * The model's constant tensors (initializers, Constant nodes, ConstantOfShape fills) and which of them are the
 * weights of Conv/Gemm/MatMul-like nodes. Parameters and sparsity are computed over these.
 */
import { attrInt, attrTensor, tensorToNumbers } from './onnx-access.js';
import type { OnnxModel, OnnxNode, OnnxTensor } from './onnx-reader.js';
import { product, type ShapeInference } from './shapes.js';

export type ConstSource = 'initializer' | 'sparse_initializer' | 'constant' | 'constant_of_shape';

export interface ConstTensor {
  name: string;
  dataType: number;
  dtype: string;
  dims: number[];
  source: ConstSource;
  /** The payload, when stored in the file (null for ConstantOfShape fills and sparse initializers). */
  tensor: OnnxTensor | null;
  /** The single value of a ConstantOfShape fill. */
  fill: number | null;
  /** Stored in an external data file that PBH does not load. */
  external: boolean;
}

/** How a weight tensor maps onto [output, reduction...] rows for the N:M check. */
export type WeightOrientation = 'as_stored' | 'transposed';

export interface WeightRef {
  constant: ConstTensor;
  /** Node consuming the weight, and its op type. */
  consumer: string;
  consumerOp: string;
  orientation: WeightOrientation;
  /** Quantized value that represents 0.0 (the zero point) for integer weights; 0 otherwise. */
  zeroValue: number;
}

const FLOAT_TYPES = new Set([1, 10, 11, 16]);

export function isFloatType(code: number): boolean {
  return FLOAT_TYPES.has(code);
}

export function collectConstants(model: OnnxModel, shapes: ShapeInference): Map<string, ConstTensor> {
  const out = new Map<string, ConstTensor>();
  for (const t of model.graph.initializers) {
    out.set(t.name, {
      name: t.name,
      dataType: t.dataType,
      dtype: t.dtype,
      dims: t.dims,
      source: 'initializer',
      tensor: t,
      fill: null,
      external: t.external !== null,
    });
  }
  for (const s of model.graph.sparseInitializers) {
    if (!s.values) continue;
    out.set(s.values.name, {
      name: s.values.name,
      dataType: s.values.dataType,
      dtype: s.values.dtype,
      dims: s.dims,
      source: 'sparse_initializer',
      tensor: null,
      fill: null,
      external: s.values.external !== null,
    });
  }
  for (const node of model.graph.nodes) {
    if (node.domain !== '') continue;
    const output = node.outputs[0];
    if (!output) continue;
    if (node.opType === 'Constant') {
      const t = attrTensor(node, 'value');
      if (t) {
        out.set(output, {
          name: output,
          dataType: t.dataType,
          dtype: t.dtype,
          dims: t.dims,
          source: 'constant',
          tensor: t,
          fill: null,
          external: t.external !== null,
        });
      }
    } else if (node.opType === 'ConstantOfShape') {
      const dims = shapes.shapes.get(output);
      if (!dims || !shapes.values.has(node.inputs[0] ?? '')) continue;
      const value = attrTensor(node, 'value');
      out.set(output, {
        name: output,
        dataType: value?.dataType ?? 1,
        dtype: value?.dtype ?? 'float32',
        dims,
        source: 'constant_of_shape',
        tensor: null,
        fill: value ? (tensorToNumbers(value)?.[0] ?? 0) : 0,
        external: false,
      });
    }
  }
  return out;
}

/** Weight input positions: op type -> [input index, whether the stored layout is [reduction, output] when rank 2]. */
const WEIGHT_INPUTS: Record<string, (node: OnnxNode) => { index: number; transposed: boolean; zeroPointInput: number | null }[]> = {
  Conv: () => [{ index: 1, transposed: false, zeroPointInput: null }],
  ConvTranspose: () => [{ index: 1, transposed: false, zeroPointInput: null }],
  ConvInteger: () => [{ index: 1, transposed: false, zeroPointInput: 3 }],
  QLinearConv: () => [{ index: 3, transposed: false, zeroPointInput: 5 }],
  Gemm: (n) => [
    { index: 0, transposed: attrInt(n, 'transA', 0) === 1, zeroPointInput: null },
    { index: 1, transposed: attrInt(n, 'transB', 0) === 0, zeroPointInput: null },
  ],
  MatMul: () => [
    { index: 0, transposed: false, zeroPointInput: null },
    { index: 1, transposed: true, zeroPointInput: null },
  ],
  MatMulInteger: () => [
    { index: 0, transposed: false, zeroPointInput: 2 },
    { index: 1, transposed: true, zeroPointInput: 3 },
  ],
  QLinearMatMul: () => [
    { index: 0, transposed: false, zeroPointInput: 2 },
    { index: 3, transposed: true, zeroPointInput: 5 },
  ],
};

/** Ops whose constant inputs carry weights in quantized form and so count as parameters. */
const QUANTIZED_WEIGHT_INPUTS: Record<string, number[]> = {
  DequantizeLinear: [0],
  QLinearConv: [3, 8],
  QLinearMatMul: [0, 3],
  ConvInteger: [1],
  MatMulInteger: [0, 1],
};

/**
 * Weights of rank >= 2 feeding Conv/Gemm/MatMul-like nodes, traced back through Identity, Cast, DequantizeLinear and
 * 2-D Transpose to a constant. Each weight appears once (its first consumer decides the orientation).
 */
export function findWeights(
  model: OnnxModel,
  shapes: ShapeInference,
  constants: Map<string, ConstTensor>,
): WeightRef[] {
  const producer = new Map<string, OnnxNode>();
  for (const n of model.graph.nodes) for (const o of n.outputs) if (o !== '') producer.set(o, n);

  const scalarValue = (name: string | undefined): number | null => {
    if (!name) return null;
    const v = shapes.values.get(name);
    if (!v || v.values.length === 0) return null;
    // Per-channel zero points that differ cannot be folded into one value; PBH then counts raw zeros.
    return v.values.every((x) => x === v.values[0]) ? v.values[0]! : null;
  };

  const trace = (
    name: string,
    transposed: boolean,
    zeroValue: number,
    depth: number,
  ): { constant: ConstTensor; transposed: boolean; zeroValue: number } | null => {
    const c = constants.get(name);
    if (c) return { constant: c, transposed, zeroValue };
    const p = producer.get(name);
    if (!p || p.domain !== '' || depth > 8) return null;
    const src = p.inputs[0] ?? '';
    switch (p.opType) {
      case 'Identity':
      case 'Cast':
        return trace(src, transposed, zeroValue, depth + 1);
      case 'DequantizeLinear':
        return trace(src, transposed, scalarValue(p.inputs[2]) ?? 0, depth + 1);
      case 'Transpose': {
        const perm = p.attributes['perm'];
        const swaps = !perm || (perm.type === 'ints' && perm.value.length === 2 && perm.value[0] === 1);
        return swaps ? trace(src, !transposed, zeroValue, depth + 1) : null;
      }
      default:
        return null;
    }
  };

  const seen = new Set<string>();
  const out: WeightRef[] = [];
  model.graph.nodes.forEach((node, i) => {
    const positions = node.domain === '' ? WEIGHT_INPUTS[node.opType]?.(node) : undefined;
    if (!positions) return;
    for (const pos of positions) {
      const input = node.inputs[pos.index];
      if (!input) continue;
      const zp = pos.zeroPointInput === null ? 0 : (scalarValue(node.inputs[pos.zeroPointInput]) ?? 0);
      const found = trace(input, pos.transposed, zp, 0);
      if (!found || found.constant.dims.length < 2 || seen.has(found.constant.name)) continue;
      seen.add(found.constant.name);
      out.push({
        constant: found.constant,
        consumer: shapes.nodeNames[i]!,
        consumerOp: node.opType,
        // Only a plain 2-D matrix can be re-oriented; higher-rank weights are read as stored.
        orientation: found.transposed && found.constant.dims.length === 2 ? 'transposed' : 'as_stored',
        zeroValue: found.zeroValue,
      });
    }
  });
  return out;
}

/**
 * Parameter count: elements of every floating-point constant (initializers, Constant nodes, ConstantOfShape fills)
 * plus integer constants that hold quantized weights (inputs of DequantizeLinear, QLinearConv, ...).
 */
export function countParameters(model: OnnxModel, constants: Map<string, ConstTensor>): number {
  const quantized = new Set<string>();
  for (const n of model.graph.nodes) {
    const idx = n.domain === '' ? QUANTIZED_WEIGHT_INPUTS[n.opType] : undefined;
    for (const i of idx ?? []) {
      const name = n.inputs[i];
      if (name) quantized.add(name);
    }
  }
  let total = 0;
  for (const c of constants.values()) {
    if (isFloatType(c.dataType) || quantized.has(c.name)) total += product(c.dims);
  }
  return total;
}
