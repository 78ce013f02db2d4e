/** `pbh prune`: magnitude and OBC pruning of an ONNX model's weights (python/prune does the numerics). */
export { DEFAULT_CONFIG_SAMPLES, resolveCalibration, type Calibration } from './calibration.js';
export { npyBytes } from './npy-write.js';
export { PruneSummarySchema, PruneWorkerError, runPrunePython, type PruneSummary } from './python.js';
export { DEFAULT_DAMPING, DEFAULT_LAYERS, parsePruneRequest, PRUNE_METHODS, PruneUsageError, type PruneMethod, type PruneRequest } from './request.js';
export { configSnippet, variantName, type SnippetSource } from './snippet.js';
