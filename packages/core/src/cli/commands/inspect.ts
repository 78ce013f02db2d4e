import { analyzeModel, formatModelReport } from '../../model/index.js';
import { EXIT, UsageError, type Command } from '../command.js';

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'analyse an ONNX model: I/O, parameters, op census, FLOPs, sparsity',
  usage: 'pbh inspect MODEL.onnx [--json]',
  help: `
Everything comes from the ONNX file itself: opset, inputs/outputs, parameter count, op census, per-node output
shapes, FLOPs per sample (1 multiply-add = 2 FLOPs) and weight sparsity (fraction of zeros, N:M pattern).

Options:
  --json   machine-readable output`,
  options: { json: { type: 'boolean' } },
  async run({ values, positionals }) {
    const file = positionals[0];
    if (!file) throw new UsageError('pbh inspect needs a model file, e.g. pbh inspect model.onnx');
    let analysis;
    try {
      analysis = await analyzeModel(file);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    process.stdout.write(values.json ? `${JSON.stringify(analysis, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v), 2)}\n` : `${formatModelReport(analysis)}\n`);
    return EXIT.ok;
  },
};
