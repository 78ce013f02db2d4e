/**
 * Quantization detection from the graph: QDQ pairs, QOperator (QLinear*), integer kernels (ConvInteger/MatMulInteger),
 * com.microsoft weight-only kernels (MatMulNBits), or reduced-precision float weights.
 */
import { attrInt } from './onnx-access.js';
import type { OnnxModel } from './onnx-reader.js';
import { isFloatType, type ConstTensor } from './constants.js';
import { product } from './shapes.js';

export type QuantizationStyle = 'qdq' | 'qoperator' | 'integer_ops' | 'weight_only' | 'reduced_float';

export interface QuantizationInfo {
  /** Storage type of the quantized weights: "int8", "uint8", "int4", "float16", ... */
  dtype: string;
  style: QuantizationStyle;
  /** Op types that revealed it. */
  evidence: string[];
}

/** Inputs holding the quantized weight (or, failing a constant weight, the zero point that fixes its type). */
const WEIGHT_POSITIONS: Record<string, number[]> = {
  DequantizeLinear: [0],
  QuantizeLinear: [2],
  QLinearConv: [3, 5],
  QLinearMatMul: [3, 5],
  ConvInteger: [1, 3],
  MatMulInteger: [1, 3],
};

const QOPERATOR = /^QLinear/;

export function detectQuantization(model: OnnxModel, constants: Map<string, ConstTensor>): QuantizationInfo | null {
  const evidence = new Set<string>();
  const dtypeVotes = new Map<string, number>();
  let style: QuantizationStyle | null = null;
  for (const n of model.graph.nodes) {
    if (n.domain === 'com.microsoft' && n.opType === 'MatMulNBits') {
      evidence.add('com.microsoft.MatMulNBits');
      style ??= 'weight_only';
      const bits = attrInt(n, 'bits', 4);
      // Votes by weights held (K x N), as a DequantizeLinear's weight votes by its size below.
      const held = attrInt(n, 'K', 1) * attrInt(n, 'N', 1);
      dtypeVotes.set(`int${bits}`, (dtypeVotes.get(`int${bits}`) ?? 0) + held);
      continue;
    }
    if (n.domain !== '' && n.domain !== 'com.microsoft') continue;
    const positions = WEIGHT_POSITIONS[n.opType];
    const isQ = positions !== undefined || QOPERATOR.test(n.opType) || n.opType === 'DynamicQuantizeLinear';
    if (!isQ) continue;
    evidence.add(n.domain === '' ? n.opType : `${n.domain}.${n.opType}`);
    if (QOPERATOR.test(n.opType)) style = 'qoperator';
    else if (n.opType === 'ConvInteger' || n.opType === 'MatMulInteger') style ??= 'integer_ops';
    else style ??= 'qdq';
    for (const i of positions ?? []) {
      const c = constants.get(n.inputs[i] ?? '');
      if (c && !isFloatType(c.dataType) && c.dtype !== 'int32') {
        // Weight at index 0 of the positions counts by its size; a zero point only breaks ties.
        const weight = i === positions![0] ? product(c.dims) : 1;
        dtypeVotes.set(c.dtype, (dtypeVotes.get(c.dtype) ?? 0) + weight);
        break;
      }
    }
  }
  // Dequantized constant weights with no activation quantized anywhere (NNCF's compress_weights, int8 weight-only):
  // the arithmetic stays float, as with MatMulNBits.
  if (style === 'qdq' && !evidence.has('QuantizeLinear') && !evidence.has('DynamicQuantizeLinear')) style = 'weight_only';
  if (style) {
    const dtype = [...dtypeVotes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'int8';
    return { dtype, style, evidence: [...evidence].sort() };
  }
  return reducedFloat(constants);
}

/** float16/bfloat16 weights with no quantization ops: report the reduced float type if it holds most parameters. */
function reducedFloat(constants: Map<string, ConstTensor>): QuantizationInfo | null {
  const byType = new Map<string, number>();
  for (const c of constants.values()) {
    if (!isFloatType(c.dataType) || c.dims.length < 2) continue;
    byType.set(c.dtype, (byType.get(c.dtype) ?? 0) + product(c.dims));
  }
  const top = [...byType.entries()].sort((a, b) => b[1] - a[1])[0];
  if (!top || (top[0] !== 'float16' && top[0] !== 'bfloat16')) return null;
  return { dtype: top[0], style: 'reduced_float', evidence: [`${top[0]} weights`] };
}
