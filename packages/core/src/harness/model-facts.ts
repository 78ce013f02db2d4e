import { stat } from 'node:fs/promises';
import type { ModelFacts } from '../contracts/profile.js';
import { DTypeSchema, type TensorMap, type TensorSpec } from '../contracts/tensor.js';
import type { ModelConfig } from '../config/schema.js';
import { analyzeModel, type AnalyzeOptions, type ModelAnalysis } from '../model/index.js';
import { modelPath, type SweepContext } from './context.js';
import type { Feeder } from './feeds.js';

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
export async function modelFacts(model: ModelConfig, resolvedPath: string, options: AnalyzeOptions = {}): Promise<ModelFacts> {
  const info = await stat(resolvedPath).catch(() => undefined);
  if (!info) {
    throw new ModelFileError(`model "${model.name}": file ${resolvedPath} does not exist. Fix models[].path (relative to the config file) or generate it (npm run generate).`);
  }
  if (!info.isFile()) {
    throw new ModelFileError(`model "${model.name}": ${resolvedPath} is a ${info.isDirectory() ? 'directory' : 'special file'}, not an ONNX file. Point models[].path at the .onnx file itself.`);
  }
  const a = await analyzeModel(resolvedPath, options);
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
    ...countFigures(a),
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
    quantization_style: a.quantizationDetail?.style ?? null,
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

/** How the count describes itself: the ops it left out (a lower bound), the If branches it took. */
function countNote(a: ModelAnalysis): string | null {
  const parts: string[] = [];
  if (a.flopsLowerBound) {
    const ops = [...new Set(a.unknownShapeOps.map((u) => u.opType))];
    parts.push(`lower bound: ${a.unknownShapeOps.length} node(s) not counted (${ops.slice(0, 6).join(', ')}${ops.length > 6 ? ', ...' : ''}; first: ${a.unknownShapeOps[0]!.reason})`);
  }
  const notes = a.flopsNotes;
  if (notes.length > 0) parts.push(`${notes.slice(0, 2).join('; ')}${notes.length > 2 ? `; and ${notes.length - 2} more such choices` : ''}`);
  if (a.intOpsPerSample !== null) parts.push(`integer kernels counted as integer OPs (int_ops_per_sample), not FLOPs`);
  return parts.length > 0 ? parts.join('. ') : null;
}

function countFigures(a: ModelAnalysis): Pick<ModelFacts, 'flops_per_sample' | 'int_ops_per_sample' | 'flops_note' | 'counted_at'> {
  return {
    flops_per_sample: a.flopsPerSample ?? null,
    int_ops_per_sample: a.intOpsPerSample,
    flops_note: countNote(a),
    ...(a.countedAt ? { counted_at: a.countedAt } : {}),
  };
}

/** Largest constant input whose values the analysis is given (a sample rate, a flag: what can decide an If). */
const MAX_CONSTANT_VALUES = 4096;

/** Whether the file's own analysis (batch axis 0 bound to 1) already counts what this cell runs. */
function fileShapesSuffice(feeder: Feeder): boolean {
  return feeder.bindings.every(
    (b) => b.source.kind === 'field' && b.batchAxis === 0 && b.input.shape.every((d, i) => i === 0 || (typeof d === 'number' && d > 0)),
  );
}

/**
 * The model's facts with its figures (FLOPs, integer OPs) counted at the shapes this cell feeds and with its constant
 * inputs' values, where the file leaves axes open, moves the batch or takes constants; once per shapes per sweep.
 */
export async function factsAtShapes(ctx: SweepContext, model: ModelConfig, facts: ModelFacts, feeder: Feeder, first: TensorMap, batch: number): Promise<ModelFacts> {
  if (fileShapesSuffice(feeder)) return facts;
  const inputs: NonNullable<AnalyzeOptions['inputs']> = {};
  for (const b of feeder.bindings) {
    const t = first[b.input.name]!;
    const small = b.source.kind === 'constant' && t.data.length <= MAX_CONSTANT_VALUES;
    inputs[b.input.name] = {
      shape: t.dims.slice(),
      values: small ? Array.from(t.data as ArrayLike<number | bigint>, Number) : null,
      isInt: !t.dtype.startsWith('float'),
    };
  }
  const file = modelPath(ctx, model);
  const key = `${file}\0${model.name}\0at\0${JSON.stringify(inputs)}\0${batch}`;
  let p = ctx.models.get(key);
  if (!p) {
    p = modelFacts(model, file, { inputs, batch });
    ctx.models.set(key, p);
  }
  const counted = await p;
  // The inputs stay the file's declared ones: the Profile says what the model takes, counted_at what this cell fed.
  return { ...counted, inputs: facts.inputs, outputs: facts.outputs };
}
