import path from 'node:path';
import { rm } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import { precisionOfDtypes, readOnnxModel, type ExecutedPrecision, type OnnxModel, type TensorSpec } from '@pbh/core';

/**
 * onnxruntime runs the graph in its own element types: it has no option that converts precision, and PBH sets none.
 * For a float graph the executed precision is therefore the graph's, read from the session's own metadata. A quantized
 * graph (QDQ, integer ops) runs int8 only where onnxruntime's optimizer fused a quantized pattern into an integer
 * kernel (QLinearConv, QGemm, ConvInteger, ...); elsewhere it dequantizes and computes in float. So for those the
 * witness is the optimized graph onnxruntime itself writes (see optimizedGraphPrecision). This is the harness door's
 * reading, through onnxruntime-node; the worker door reads its own session the same way (python/onnxruntime_worker.py).
 */
export function graphPrecision(inputs: TensorSpec[], outputs: TensorSpec[]): ExecutedPrecision {
  const tensors = [...outputs, ...inputs];
  const floats = tensors.filter((t) => t.dtype.startsWith('float')).map((t) => `${t.name} ${t.dtype}`);
  return {
    executed: precisionOfDtypes(tensors.map((t) => t.dtype)),
    evidence: `onnxruntime executes the graph's own element types (no precision conversion); session metadata: ${floats.length ? floats.join(', ') : 'no float inputs or outputs'}`,
  };
}

/** Ops that mark a graph as quantized: the ones a QDQ or integer-ops model is written with. */
const QUANTIZED_MARKERS = /^(QuantizeLinear|DequantizeLinear|DynamicQuantizeLinear|ConvInteger|MatMulInteger|QLinear\w+|QGemm)$/;
/** Kernels of onnxruntime's CPU provider that multiply-accumulate in 8-bit integers (ai.onnx and com.microsoft). */
const INT8_COMPUTE = new Set(['QLinearConv', 'QLinearMatMul', 'ConvInteger', 'MatMulInteger', 'QGemm', 'DynamicQuantizeMatMul', 'MatMulIntegerToFloat', 'QAttention', 'DynamicQuantizeLSTM']);
/** Float kernels that do the same work (any domain: com.microsoft's fused ones, com.microsoft.nchwc's Conv). */
const FLOAT_COMPUTE = new Set(['Conv', 'FusedConv', 'ConvTranspose', 'MatMul', 'FusedMatMul', 'Gemm', 'FusedGemm', 'Attention', 'MultiHeadAttention']);

export function isQuantizedGraph(model: OnnxModel): boolean {
  return model.graph.nodes.some((n) => QUANTIZED_MARKERS.test(n.opType));
}

function census(model: OnnxModel, kinds: Set<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const n of model.graph.nodes) {
    if (!kinds.has(n.opType)) continue;
    const name = n.domain && n.domain !== 'ai.onnx' ? `${n.domain}.${n.opType}` : n.opType;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

const listed = (counts: Map<string, number>): string => [...counts].sort((a, b) => b[1] - a[1]).map(([op, k]) => `${op} x${k}`).join(', ') || 'none';

/**
 * The executed precision of a quantized graph from the graph onnxruntime runs: a second session with the same
 * options writes its optimized graph (SessionOptions.optimizedModelFilePath) and the compute kernels in it are counted.
 * Any int8 compute kernel makes it int8 (the least precise arithmetic bounds the outputs' error), with the float
 * kernels beside it in the evidence; none means the quantized ops were dequantized and computed in float.
 */
export async function optimizedGraphPrecision(
  modelPath: string,
  options: ort.InferenceSession.SessionOptions,
  level: string,
  workDir: string,
  float: ExecutedPrecision,
): Promise<ExecutedPrecision> {
  const file = path.join(workDir, 'ort_optimized_witness.onnx');
  const witness = await ort.InferenceSession.create(modelPath, { ...options, optimizedModelFilePath: file });
  await witness.release();
  try {
    const { model } = await readOnnxModel(file);
    const int8 = census(model, INT8_COMPUTE);
    const floats = census(model, FLOAT_COMPUTE);
    const where = `onnxruntime's optimized graph (graphOptimizationLevel ${level}, written by a witness session with the same options)`;
    if (int8.size === 0) {
      return { executed: float.executed, evidence: `${where} has no int8 kernel: its quantized ops are dequantized and computed in float (${listed(floats)}); ${float.evidence}` };
    }
    return { executed: 'int8', evidence: `${where}: int8 kernels ${listed(int8)}; float compute kernels ${listed(floats)}` };
  } finally {
    await rm(file, { force: true });
  }
}

/** The precision of an onnxruntime-node session: its metadata's, or for a quantized graph its optimized graph's. */
export async function sessionPrecision(
  modelPath: string,
  options: ort.InferenceSession.SessionOptions,
  level: string,
  workDir: string,
  inputs: TensorSpec[],
  outputs: TensorSpec[],
): Promise<ExecutedPrecision> {
  const float = graphPrecision(inputs, outputs);
  const { model } = await readOnnxModel(modelPath);
  return isQuantizedGraph(model) ? optimizedGraphPrecision(modelPath, options, level, workDir, float) : float;
}

/** Refuses a precision other than the one onnxruntime executes the graph in. */
export function checkPrecision(precision: ExecutedPrecision, requested: string, modelPath: string): void {
  if (precision.executed === requested) return;
  if (requested === 'int8') {
    throw new Error(
      `onnxruntime executes ${modelPath} in ${precision.executed}, not int8 (${precision.evidence}): quantize the model first (pbh quantize), or for a quantized model raise graphOptimizationLevel so onnxruntime fuses its QDQ pairs into int8 kernels`,
    );
  }
  throw new Error(
    `onnxruntime executes ${modelPath} in the graph's own precision, ${precision.executed}; it cannot execute it in ${requested}: convert the model first, or leave engines[].precision unset`,
  );
}

/** The session runs any batch its graph leaves symbolic on axis 0. */
export const acceptsSmallerBatch = (inputs: TensorSpec[]): boolean => inputs.every((i) => typeof i.shape[0] !== 'number');
