import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatasetError } from '../../dataset/index.js';
import { analyzeModel, OnnxFormatError, readOnnxModel } from '../../model/index.js';
import { DEFAULT_CONFIG_SAMPLES, PruneUsageError, resolveCalibration } from '../../prune/index.js';
import {
  GRANULARITIES,
  parseQuantizeRequest,
  QUANTIZE_METHODS,
  QuantizeUsageError,
  quantizeSnippet,
  runQuantizePython,
  type QuantizeSummary,
} from '../../quantize/index.js';
import { EXIT, UsageError, type Command } from '../command.js';

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** One row per variant: what the tool wrote, read back by PBH's own analysis (quantization style, the metadata). */
async function variantTable(summary: QuantizeSummary): Promise<string> {
  const header = ['file', 'method', 'library', 'weights', 'activations', 'scales', 'PBH reads', 'size', 'agreement', 'max abs err'];
  const rows: string[][] = [];
  for (const v of summary.variants) {
    const a = await analyzeModel(v.file);
    if (!a.quantizationFacts) throw new Error(`${v.file}: the pbh.optimization metadata written by python/quantize does not read back: ${a.warnings.join('; ')}`);
    const q = a.quantizationDetail;
    rows.push([
      path.basename(v.file),
      v.method,
      `${v.library.name} ${v.library.version}`,
      v.weight_dtype ?? '?',
      v.activation_dtype ?? (v.scheme === 'weight_only' ? 'float' : '?'),
      v.block_size ? `blocks of ${v.block_size}` : v.per_channel ? 'per-channel' : 'per-tensor',
      q ? `${q.dtype} ${q.style}` : 'NOT QUANTIZED',
      `${(v.size_bytes / summary.source_size_bytes).toFixed(2)}x`,
      v.check ? pct(v.check.agreement) : '-',
      v.check ? v.check.max_abs_error.toPrecision(3) : '-',
    ]);
  }
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  return [header, ...rows].map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()).join('\n');
}

export const quantizeCommand: Command = {
  name: 'quantize',
  summary: "quantize a model to INT8 (ONNX Runtime's static QDQ or dynamic, or NNCF), or compress its weights to int8/int4, into one ONNX file per variant",
  usage: 'pbh quantize MODEL.onnx --out DIR [--method static,dynamic,nncf,int4,nncf-int8,nncf-int4] [--granularity per_channel,per_tensor] [--calibration FILE.npy|CONFIG.yaml]',
  help: `
Writes DIR/NAME.METHOD.TAG.onnx for every method x granularity (TAG: int8 for per-channel weight scales, int8_pt
for per-tensor; a weight-only method writes one file, TAG its weights' type) with what was done (method, scheme, weight and activation dtypes read from the written graph,
per-channel, calibration source and size, the library and its version, a check against the source on calibration
samples) in the ONNX metadata under pbh.optimization, which pbh inspect and pbh run read back; then prints a config
snippet that benchmarks them. PBH runs no quantizer of its own: each method is a kept library's.

Methods:
  static    onnxruntime.quantization.quantize_static: QDQ, MinMax calibration, activations uint8 (asymmetric),
            weights int8 (symmetric): the pair ONNX Runtime's x86 kernels fuse into QLinearConv/QGemm
  dynamic   onnxruntime.quantization.quantize_dynamic: int8 weights, activations quantized at run time
            (ConvInteger/MatMulInteger); no calibration (ONNX Runtime keeps Conv weights per-tensor here)
  nncf      nncf.quantize: NNCF's post-training quantization (its default preset, fast bias correction)
Weight-only (a language model's decoder takes these only; activations stay float, no calibration; its tokenizer
files are copied beside the variants so pbh run feeds them the same ids):
  int4      onnxruntime's MatMulNBitsQuantizer: MatMuls to com.microsoft.MatMulNBits, symmetric int4, blocks of 32
  nncf-int8 nncf.compress_weights(mode=INT8_ASYM): uint8 weights per output channel behind DequantizeLinear
  nncf-int4 nncf.compress_weights(mode=INT4_SYM, group_size=32, ratio=1.0): MatMulNBits; embeddings and the last
            MatMul kept at int8, as NNCF does

Options:
  --out DIR                 folder for the quantized files (created)
  --method LIST             static (default), dynamic, nncf, int4, nncf-int8, nncf-int4; comma-separated for several (${QUANTIZE_METHODS.join(', ')})
  --granularity LIST        weight scales ${GRANULARITIES.join(' or ')} (default per_channel)
  --calibration SOURCE      for static and nncf: an .npy of preprocessed model inputs [count, ...], or an experiment
                            config whose dataset and preprocessing feed the model (its models[] entry with this path)
  --calibration-samples N   samples taken from a config's dataset (default ${DEFAULT_CONFIG_SAMPLES}, at most the dataset)
  --name NAME               file and model name stem (default: the model file's name)
  --json                    print the summary as JSON instead of the table and snippet

A pruned model quantized keeps its zeros (weights are symmetric int8) and its pruning facts under pruned.
Calibrate on training data, not on the split you score.`,
  options: {
    out: { type: 'string' },
    method: { type: 'string' },
    granularity: { type: 'string' },
    calibration: { type: 'string' },
    'calibration-samples': { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, positionals }) {
    const scratch = await mkdtemp(path.join(tmpdir(), 'pbh-quantize-'));
    try {
      const request = parseQuantizeRequest(values, positionals);
      const { model } = await readOnnxModel(request.model).catch((e: unknown) => {
        if (e instanceof OnnxFormatError) throw new UsageError(e.message);
        const code = (e as NodeJS.ErrnoException).code;
        throw new UsageError(code === 'ENOENT' ? `${request.model}: no such model file` : `${request.model}: ${(e as Error).message}`);
      });
      const calibration = request.calibration
        ? await resolveCalibration(request.calibration, request.model, request.calibrationSamples, scratch)
        : null;
      const summary = await runQuantizePython(request, calibration, (line) => process.stderr.write(`pbh quantize: ${line}\n`));
      if (values.json) {
        process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        return EXIT.ok;
      }
      const source = {
        model: request.model,
        stem: request.stem,
        family: model.metadata['pbh.family'] ?? null,
        weights: model.metadata['pbh.weights'] ?? null,
      };
      const seconds = Object.entries(summary.seconds).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ');
      process.stdout.write(`${await variantTable(summary)}\ntime: ${seconds}\n\n${quantizeSnippet(source, summary)}\n`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof QuantizeUsageError || e instanceof PruneUsageError || e instanceof DatasetError) throw new UsageError(e.message);
      throw e;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  },
};
