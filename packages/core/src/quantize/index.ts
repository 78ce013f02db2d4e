/** `pbh quantize`: INT8 post-training quantization with ONNX Runtime's tool and NNCF (python/quantize does the work). */
export { QuantizeSummarySchema, QuantizeWorkerError, runQuantizePython, type QuantizeSummary } from './python.js';
export { GRANULARITIES, parseQuantizeRequest, QUANTIZE_METHODS, QuantizeUsageError, type Granularity, type QuantizeMethod, type QuantizeRequest } from './request.js';
export { quantizedName, quantizeSnippet } from './snippet.js';
