import path from 'node:path';
import { analyzeModel, formatModelReport, type ModelAnalysis, type TensorInfo } from '../../model/index.js';
import { convertModel, converterFor, type Conversion } from '../../model/convert.js';
import { EXIT, UsageError, type Command } from '../command.js';

/** How `--config` proposes to feed one input, and why. */
interface ProposedFeed {
  input: TensorInfo;
  yaml: string | null;
  dataset: boolean;
  why: string;
}

const dimText = (d: TensorInfo['shape'][number]): string => (d === null || (typeof d === 'number' && d <= 0) ? '?' : String(d));
const isOpen = (d: TensorInfo['shape'][number] | undefined): boolean => !(typeof d === 'number' && d > 0);
const STATE_NAME = /(^|_)(state|states|hidden|h0|c0|h|c|cache|past|mem|memory)(_|\d|$)/i;

function proposeFeeds(a: ModelAnalysis): ProposedFeed[] {
  const primary = a.inputs.find((i) => i.shape.length > 0 && !STATE_NAME.test(i.name)) ?? a.inputs[0];
  const batchSymbol = primary && typeof primary.shape[0] === 'string' ? primary.shape[0] : null;
  return a.inputs.map((input): ProposedFeed => {
    const shape = input.shape;
    if (shape.length === 0) {
      return { input, dataset: false, yaml: `{ constant: 0, dtype: ${input.dtype} }`, why: `a scalar: fed as a constant every query; set its value (a sample rate, a flag)` };
    }
    const batchAxis = batchSymbol !== null && !isOpen(shape[0]) ? shape.indexOf(batchSymbol) : -1;
    if (input !== primary && (batchAxis > 0 || STATE_NAME.test(input.name)) && input.dtype.startsWith('float')) {
      const open = shape.some((d, i) => i !== batchAxis && i !== 0 && isOpen(d));
      const zeros = open ? `{ zeros: true, shape: [${shape.map((d, i) => (i === batchAxis || (batchAxis < 0 && i === 0) ? "'batch'" : isOpen(d) ? 'N' : d)).join(', ')}] }` : '{ zeros: true }';
      return {
        input,
        dataset: false,
        yaml: zeros,
        why: `looks like recurrent state: zeros at its start (one step per query; PBH never feeds a step's output back)${batchAxis > 0 ? `, batch on axis ${batchAxis}` : ''}`,
      };
    }
    return { input, dataset: true, yaml: null, why: `from the dataset field "${input.name}" (an .npy, samples on axis 0)` };
  });
}

/** A ready experiment for the model: every input with its dtype, shape, open axes and what it will be fed. */
export function configSnippet(a: ModelAnalysis, modelPath: string): string {
  const name = path.basename(modelPath).replace(/\.onnx$/i, '').replace(/[^A-Za-z0-9_.-]+/g, '_');
  const feeds = proposeFeeds(a);
  const lines: string[] = [`# pbh inspect ${modelPath} --config`, '# Inputs:'];
  for (const f of feeds) {
    const open = f.input.shape.flatMap((d, i) => (isOpen(d) ? [`${i}${typeof d === 'string' ? ` (${d})` : ''}`] : []));
    lines.push(`#   ${f.input.name}: ${f.input.dtype} [${f.input.shape.map(dimText).join(', ')}]${open.length ? `, open axes ${open.join(', ')}` : ''} -> ${f.why}`);
  }
  lines.push(`name: ${name}`, 'dataset:', '  kind: npy', '  inputs:');
  const fromData = feeds.filter((f) => f.dataset);
  if (fromData.length === 0) lines.push('    {}');
  for (const f of fromData) {
    const sample = f.input.shape.slice(1).map((d) => (isOpen(d) ? 'N' : String(d)));
    lines.push(`    ${f.input.name}: data/${f.input.name.replace(/[^A-Za-z0-9_.-]+/g, '_')}.npy   # ${f.input.dtype} [samples${sample.length ? `, ${sample.join(', ')}` : ''}]${sample.includes('N') ? ': choose each N (axes the model leaves open)' : ''}`);
  }
  lines.push('models:', `  - name: ${name}`, `    path: ${JSON.stringify(path.resolve(modelPath))}`);
  const mapped = feeds.filter((f) => f.yaml !== null);
  if (mapped.length > 0) {
    lines.push('    inputs:');
    for (const f of mapped) lines.push(`      ${f.input.name}: ${f.yaml}   # ${f.input.shape.length === 0 ? 'set the value it takes' : 'recurrent state at its start'}`);
  }
  lines.push('engines:', '  - { name: onnxruntime }', '  - { name: openvino }', '  - { name: tvm }', 'batch_sizes: [1]');
  return `${lines.join('\n')}\n`;
}

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'analyse a model: I/O, parameters, op census, FLOPs, sparsity (another framework\'s as its ONNX export)',
  usage: 'pbh inspect MODEL(.onnx, .pt, .pt2, .keras, .tflite or a SavedModel folder) [--shape NAME=D,D,...]... [--json | --config]',
  help: `
Everything comes from the ONNX file itself: opset, inputs/outputs, parameter count, op census, per-node output
shapes, FLOPs per sample (1 multiply-add = 2 FLOPs; integer kernels as integer OPs) and weight sparsity. A model of
another framework (a TorchScript .pt, a torch.export .pt2, a TensorFlow SavedModel folder, a .keras or .tflite file)
is converted to ONNX once, as pbh run does (cached), and its export is what is counted; the report names it.

Options:
  --shape    NAME=D,D,...: count at this shape of input NAME (repeatable; e.g. --shape x=1,3,48,320 for a model
             that leaves axes open: pbh run counts at each cell's own shapes); the first axis is the batch
  --json     machine-readable output
  --config   a ready experiment (dataset: and models: blocks) for this model: every input with its dtype, shape,
             open axes and what it will be fed (a dataset field, a constant, zeros for recurrent state)`,
  options: { json: { type: 'boolean' }, config: { type: 'boolean' }, shape: { type: 'string', multiple: true } },
  async run({ values, positionals }) {
    const file = positionals[0];
    if (!file) throw new UsageError('pbh inspect needs a model file, e.g. pbh inspect model.onnx');
    if (values.json && values.config) throw new UsageError('pbh inspect takes --json or --config, not both');
    const inputs: Record<string, { shape: number[] }> = {};
    for (const arg of (values.shape as string[] | undefined) ?? []) {
      const m = /^([^=]+)=(\d+(?:,\d+)*|)$/.exec(arg);
      if (!m) throw new UsageError(`--shape ${arg}: write NAME=D,D,... with positive integers, e.g. --shape x=1,3,48,320 (NAME= for a scalar)`);
      inputs[m[1]!] = { shape: m[2] ? m[2].split(',').map(Number) : [] };
    }
    const batch = Object.values(inputs).find((i) => i.shape.length > 0)?.shape[0];
    // A model of another framework (.pt, .pt2, a SavedModel, .keras, .tflite) is analysed as its cached ONNX export,
    // the graph the ONNX engines run, and the report says so.
    const converter = converterFor(path.resolve(file));
    let analysis;
    let converted: Conversion | undefined;
    try {
      converted = converter ? await convertModel(path.resolve(file), converter) : undefined;
      analysis = await analyzeModel(converted?.onnx_path ?? file, Object.keys(inputs).length > 0 ? { inputs, ...(batch ? { batch } : {}) } : {});
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const source = converted && { path: path.resolve(file), format: converted.format, onnx_path: converted.onnx_path, exporter: converted.exporter, exporter_version: converted.exporter_version };
    if (values.config) {
      process.stdout.write(configSnippet(analysis, file));
      return EXIT.ok;
    }
    const said = source ? `converted from ${source.path} (${source.format}) by ${source.exporter}, ${source.exporter_version}: the figures below are the ONNX export's (${source.onnx_path})\n` : '';
    process.stdout.write(values.json ? `${JSON.stringify(source ? { ...analysis, source } : analysis, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v), 2)}\n` : `${said}${formatModelReport(analysis)}\n`);
    return EXIT.ok;
  },
};
