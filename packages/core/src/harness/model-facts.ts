import { stat } from 'node:fs/promises';
import type { ModelFacts } from '../contracts/profile.js';
import { DTypeSchema, type TensorSpec } from '../contracts/tensor.js';
import type { ModelConfig } from '../config/schema.js';
import { analyzeModel, type ModelAnalysis } from '../model/index.js';

export class ModelFileError extends Error {
  override name = 'ModelFileError';
}

function tensorSpecs(model: string, kind: 'input' | 'output', infos: ModelAnalysis['inputs']): TensorSpec[] {
  return infos.map((t) => {
    const dtype = DTypeSchema.safeParse(t.dtype);
    if (!dtype.success) {
      throw new ModelFileError(`model "${model}": ${kind} "${t.name}" has element type ${t.dtype}, which PBH cannot feed or compare; supported: ${DTypeSchema.options.join(', ')}.`);
    }
    return { name: t.name, dtype: dtype.data, shape: t.shape };
  });
}

/** Analyses the ONNX file (once per path per sweep) and joins it with what the config says about the model. */
export async function modelFacts(model: ModelConfig, resolvedPath: string): Promise<ModelFacts> {
  const info = await stat(resolvedPath).catch(() => undefined);
  if (!info) {
    throw new ModelFileError(`model "${model.name}": file ${resolvedPath} does not exist. Fix models[].path (relative to the config file) or generate it (npm run generate).`);
  }
  if (!info.isFile()) {
    throw new ModelFileError(`model "${model.name}": ${resolvedPath} is a ${info.isDirectory() ? 'directory' : 'special file'}, not an ONNX file. Point models[].path at the .onnx file itself.`);
  }
  const a = await analyzeModel(resolvedPath);
  // What the config declares wins over what the file's metadata recorded (pbh prune's pbh.optimization); the measured
  // figures (actual, kind, a detected N:M) win over both.
  const declared = model.optimization?.sparsity;
  const recorded = a.optimization;
  const facts: ModelFacts = {
    name: model.name,
    family: model.family ?? a.family ?? null,
    framework: model.framework ?? null,
    weights: model.weights,
    path: resolvedPath,
    sha256: a.sha256,
    size_bytes: a.sizeBytes,
    opset: a.opset ?? null,
    inputs: tensorSpecs(model.name, 'input', a.inputs),
    outputs: tensorSpecs(model.name, 'output', a.outputs),
    parameters: a.parameters,
    flops_per_sample: a.flopsPerSample ?? null,
    op_census: a.opCensus,
    sparsity: {
      actual: a.sparsity.actual,
      target: declared?.target ?? recorded?.target ?? null,
      kind: a.sparsity.kind,
      n: a.sparsity.n ?? declared?.n ?? recorded?.n ?? null,
      m: a.sparsity.m ?? declared?.m ?? recorded?.m ?? null,
      nm_pattern_holds: a.sparsity.nmPatternHolds ?? null,
      method: recorded?.method ?? null,
    },
    quantization: model.optimization?.quantization ?? a.quantization ?? null,
    quantized: a.quantizationFacts && {
      method: a.quantizationFacts.method,
      scheme: a.quantizationFacts.scheme,
      format: a.quantizationFacts.format,
      weight_dtype: a.quantizationFacts.weight_dtype,
      activation_dtype: a.quantizationFacts.activation_dtype,
      per_channel: a.quantizationFacts.per_channel,
      calibration: a.quantizationFacts.calibration && { source: a.quantizationFacts.calibration.source, samples: a.quantizationFacts.calibration.samples },
      library: `${a.quantizationFacts.library.name} ${a.quantizationFacts.library.version}`,
    },
  };
  return facts;
}
