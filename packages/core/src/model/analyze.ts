/** Everything PBH knows about a model, read from the ONNX file alone. */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { collectConstants, countParameters, findWeights } from './constants.js';
import { countFlops, FLOPS_CONVENTION } from './flops.js';
import { decodeOnnxModel, type OnnxDim, type OnnxModel, type OnnxValueInfo } from './onnx-reader.js';
import { readOptimizationFacts, type OptimizationFacts, type QuantizationFacts } from './optimization.js';
import { detectQuantization, type QuantizationInfo } from './quantization.js';
import { inferShapes, qualifiedOpType, type ShapeInferenceOptions } from './shapes.js';
import { analyzeSparsity, type SparsityAnalysis } from './sparsity.js';

export interface TensorInfo {
  name: string;
  /** 'float32' | 'int64' | ... ('unknown' for non-tensor values). */
  dtype: string;
  /** dim_value as a number, dim_param as a string, null when the model leaves the dim unset. */
  shape: OnnxDim[];
}

export interface NodeInfo {
  name: string;
  opType: string;
  /** Output shapes at the analysed batch (1 unless the model fixes another batch); null when unknown. */
  outputShapes: (number[] | null)[];
  /** FLOPs per sample; null when not counted. */
  flops: number | null;
}

export interface UncountedNode {
  node: string;
  opType: string;
  reason: string;
}

export interface ModelAnalysis {
  path: string;
  sha256: string;
  sizeBytes: number;
  irVersion: number;
  /** Version of the default ONNX domain (ai.onnx), or null when not imported. */
  opset: number | null;
  opsetImports: { domain: string; version: number }[];
  /** "producer_name producer_version", or null when unset. */
  producer: string | null;
  graphName: string;
  inputs: TensorInfo[];
  outputs: TensorInfo[];
  parameters: number;
  /** Op type (domain-qualified outside ai.onnx) -> node count. */
  opCensus: Record<string, number>;
  nodes: NodeInfo[];
  /** Batch the shapes were inferred at; FLOPs are divided by it to give per-sample figures. */
  batchSize: number;
  /** Symbolic input dims PBH could not bind (other than the batch). */
  unboundDims: string[];
  /** FLOPs per sample over the nodes PBH could count; a lower bound when flopsLowerBound. null if none counted. */
  flopsPerSample: number | null;
  flopsByOp: Record<string, number>;
  /** Integer OPs per sample (ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul), apart from FLOPs; null if none. */
  intOpsPerSample: number | null;
  intOpsByOp: Record<string, number>;
  /** What the count chose (the If branch taken or the costlier one, a Loop's trip count). */
  flopsNotes: string[];
  /** The input shapes the figures were counted at, where the caller gave them (a cell's); null: the file's own. */
  countedAt: Record<string, number[]> | null;
  flopsLowerBound: boolean;
  flopsConvention: string;
  /** Nodes left out of the FLOPs total: unknown shapes or ops without a rule. */
  unknownShapeOps: UncountedNode[];
  /** Op types without a shape rule (their outputs are unknown unless the model declares them). */
  unsupportedOps: string[];
  sparsity: SparsityAnalysis;
  /** Quantized weight type ("int8", "uint8", "int4", "float16", ...) or null for a float32 model. */
  quantization: string | null;
  quantizationDetail: QuantizationInfo | null;
  /** What a tool such as `pbh prune` recorded in the metadata about how the weights were optimized; null if nothing. */
  optimization: OptimizationFacts | null;
  /** What `pbh quantize` recorded in the metadata (method, dtypes, calibration, tool); null if nothing. */
  quantizationFacts: QuantizationFacts | null;
  /** metadata_props pbh.family (the suite and pbh prune set it), or null. */
  family: string | null;
  /** Tensors whose data lives in external files (listed, not loaded). */
  externalData: { tensor: string; location: string; offset: number | null; length: number | null }[];
  warnings: string[];
  analysisMs: number;
}

export type AnalyzeOptions = ShapeInferenceOptions;

export async function analyzeModel(path: string, options: AnalyzeOptions = {}): Promise<ModelAnalysis> {
  const started = performance.now();
  const bytes = await readFile(path);
  return analyzeModelBytes(bytes, path, options, started);
}

/** Same as analyzeModel for bytes already in memory; `path` is only reported. */
export function analyzeModelBytes(
  bytes: Uint8Array,
  path: string,
  options: AnalyzeOptions = {},
  started = performance.now(),
): ModelAnalysis {
  const model = decodeOnnxModel(bytes, path);
  const shapes = inferShapes(model, options);
  const flops = countFlops(model, shapes);
  const constants = collectConstants(model, shapes);
  const weights = findWeights(model, shapes, constants);
  const sparsity = analyzeSparsity(weights);
  const quant = detectQuantization(model, constants);
  const optimization = readOptimizationFacts(model.metadata);
  const batch = shapes.batchSize;

  const opCensus: Record<string, number> = {};
  for (const n of model.graph.nodes) {
    const op = qualifiedOpType(n);
    opCensus[op] = (opCensus[op] ?? 0) + 1;
  }
  const flopsByNode = new Map(flops.perNode.map((f) => [f.index, f.flops]));
  const nodes: NodeInfo[] = model.graph.nodes.map((n, i) => {
    const f = flopsByNode.get(i);
    return {
      name: shapes.nodeNames[i]!,
      opType: qualifiedOpType(n),
      outputShapes: n.outputs.map((o) => shapes.shapes.get(o) ?? null),
      flops: f === undefined || f === null ? null : f / batch,
    };
  });
  const counted = flops.perNode.some((f) => f.flops !== null);
  const flopsByOp = Object.fromEntries(Object.entries(flops.byOpType).map(([k, v]) => [k, v / batch]));

  return {
    path,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    sizeBytes: bytes.byteLength,
    irVersion: model.irVersion,
    opset: model.opsetImport.find((o) => o.domain === '')?.version ?? null,
    opsetImports: model.opsetImport,
    producer: [model.producerName, model.producerVersion].filter((s) => s !== '').join(' ') || null,
    graphName: model.graph.name,
    inputs: realInputs(model).map(tensorInfo),
    outputs: model.graph.outputs.map(tensorInfo),
    parameters: countParameters(model, constants),
    opCensus,
    nodes,
    batchSize: batch,
    unboundDims: shapes.unboundDims,
    flopsPerSample: counted || model.graph.nodes.length === 0 ? flops.total / batch : null,
    flopsByOp,
    intOpsPerSample: flops.intOps > 0 ? flops.intOps / batch : null,
    intOpsByOp: Object.fromEntries(Object.entries(flops.intOpsByOpType).map(([k, v]) => [k, v / batch])),
    flopsNotes: flops.notes,
    countedAt: options.inputs ? Object.fromEntries(Object.entries(options.inputs).map(([k, v]) => [k, v.shape])) : null,
    flopsLowerBound: flops.lowerBound,
    flopsConvention: FLOPS_CONVENTION,
    unknownShapeOps: flops.uncounted,
    unsupportedOps: shapes.unsupportedOps,
    sparsity,
    quantization: quant?.dtype ?? null,
    quantizationDetail: quant,
    optimization: optimization.facts,
    quantizationFacts: optimization.quantization,
    family: model.metadata['pbh.family'] ?? null,
    externalData: model.graph.initializers
      .filter((t) => t.external)
      .map((t) => ({ tensor: t.name, location: t.external!.location, offset: t.external!.offset, length: t.external!.length })),
    warnings: [
      ...shapes.warnings,
      ...sparsity.skipped.map((s) => `weight ${s.name} left out of sparsity: ${s.reason}`),
      ...(optimization.warning ? [optimization.warning] : []),
    ],
    analysisMs: performance.now() - started,
  };
}

/** Graph inputs that are not initializers (IR < 4 lists every initializer among the inputs too). */
function realInputs(model: OnnxModel): OnnxValueInfo[] {
  const inits = new Set(model.graph.initializers.map((t) => t.name));
  return model.graph.inputs.filter((i) => !inits.has(i.name));
}

function tensorInfo(v: OnnxValueInfo): TensorInfo {
  if (v.type.kind === 'tensor' || v.type.kind === 'sparse_tensor') {
    return { name: v.name, dtype: v.type.dtype, shape: v.type.shape ?? [] };
  }
  return { name: v.name, dtype: v.type.kind, shape: [] };
}
