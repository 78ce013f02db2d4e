/** Model analysis: everything PBH knows about a model, read from the ONNX file itself. */
export {
  analyzeModel,
  analyzeModelBytes,
  type AnalyzeOptions,
  type ModelAnalysis,
  type NodeInfo,
  type TensorInfo,
  type UncountedNode,
} from './analyze.js';
export { formatModelReport, formatFlops, formatCount, formatBytes } from './report.js';
export {
  analyzeSparsity,
  checkNM,
  nmPatternHolds,
  HISTOGRAM_GROUP_SIZES,
  NM_CANDIDATES,
  type NMCheck,
  type NMPatternStat,
  type SparsityAnalysis,
  type TensorSparsity,
  type WeightLike,
} from './sparsity.js';
export { countFlops, FLOPS_CONVENTION, FLOPS_RULE_OPS, type FlopsResult, type NodeFlops } from './flops.js';
export {
  inferShapes,
  SHAPE_RULE_OPS,
  type KnownValue,
  type Shape,
  type ShapeInference,
  type ShapeInferenceOptions,
} from './shapes.js';
export { collectConstants, countParameters, findWeights, type ConstTensor, type WeightRef } from './constants.js';
export {
  OPTIMIZATION_METADATA_KEY,
  OptimizationFactsSchema,
  PrunedLayerSchema,
  QuantizationFactsSchema,
  readOptimizationFacts,
  type OptimizationFacts,
  type PrunedLayer,
  type QuantizationFacts,
} from './optimization.js';
export { detectQuantization, type QuantizationInfo, type QuantizationStyle } from './quantization.js';
export {
  decodeOnnxModel,
  readOnnxModel,
  OnnxFormatError,
  ONNX_DTYPES,
  type OnnxAttribute,
  type OnnxDim,
  type OnnxGraph,
  type OnnxModel,
  type OnnxNode,
  type OnnxTensor,
  type OnnxType,
  type OnnxValueInfo,
} from './onnx-reader.js';
