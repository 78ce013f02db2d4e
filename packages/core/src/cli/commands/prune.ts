import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatasetError } from '../../dataset/index.js';
import { analyzeModel, nmPatternHolds, OnnxFormatError, readOnnxModel } from '../../model/index.js';
import {
  configSnippet,
  DEFAULT_CONFIG_SAMPLES,
  DEFAULT_DAMPING,
  DEFAULT_LAYERS,
  parsePruneRequest,
  PruneUsageError,
  resolveCalibration,
  runPrunePython,
  type PruneSummary,
} from '../../prune/index.js';
import { EXIT, UsageError, type Command } from '../command.js';

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** One row per variant: what was asked, what the pruned layers hold, and what PBH's own analysis reads back. */
async function variantTable(summary: PruneSummary): Promise<string> {
  const header = ['file', 'method', 'kind', 'target', 'actual (pruned layers)', 'actual (all weights)', 'N:M holds', 'mean rel. error'];
  const rows: string[][] = [];
  for (const v of summary.variants) {
    const a = await analyzeModel(v.file);
    if (!a.optimization) throw new Error(`${v.file}: the pbh.optimization metadata written by python/prune does not read back: ${a.warnings.join('; ')}`);
    const holds = v.n !== null && v.m !== null ? nmPatternHolds(a.sparsity, v.n, v.m) : null;
    const errors = v.layers.map((l) => l.relative_error).filter((e): e is number => e !== null);
    rows.push([
      path.basename(v.file),
      v.method,
      v.kind === 'n_m' ? `${v.n}:${v.m}` : 'unstructured',
      pct(v.target),
      pct(v.actual),
      pct(a.sparsity.actual),
      holds === null ? '-' : holds ? 'yes' : 'NO',
      errors.length ? (errors.reduce((s, e) => s + e, 0) / errors.length).toExponential(2) : '-',
    ]);
  }
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  return [header, ...rows].map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()).join('\n');
}

export const pruneCommand: Command = {
  name: 'prune',
  summary: 'prune a model (magnitude or OBC, unstructured and N:M) into one ONNX file per variant',
  usage: 'pbh prune MODEL.onnx --out DIR [--unstructured 0.25,0.75] [--nm 1:2,2:4,4:8] [--method obc|magnitude] [--calibration FILE.npy|CONFIG.yaml]',
  help: `
Writes DIR/NAME.METHOD.TAG.onnx for every method x variant (TAG: sparse25, 2of4, ...) with the optimization facts
(method, kind, target, N, M, per-layer and overall actual sparsity, calibration) in the ONNX metadata under
pbh.optimization, which pbh inspect and pbh run read back; then prints a config snippet that benchmarks them.

N:M means at most N nonzeros in every M consecutive weights along a layer's input (2:4 keeps 2 of every 4), the
pattern pbh inspect checks. Only the chosen layers are pruned; biases, norms and embeddings stay dense.

Options:
  --out DIR                 folder for the pruned files (created)
  --unstructured LIST       zero fractions per layer, e.g. 0.25,0.75
  --nm LIST                 N:M patterns, e.g. 1:2,2:4,4:8
  --method LIST             obc (default): Optimal Brain Compression, layer-wise exact OBS with each layer's
                            Hessian from calibration inputs; magnitude: smallest |w| per layer (no data needed);
                            obc,magnitude writes both
  --calibration SOURCE      for obc: an .npy of preprocessed model inputs [count, ...], or an experiment config
                            whose dataset and preprocessing feed the model (its models[] entry with this path)
  --calibration-samples N   samples taken from a config's dataset (default ${DEFAULT_CONFIG_SAMPLES}, at most the dataset)
  --layers LIST             op types, node names or weight names to prune (default ${DEFAULT_LAYERS.join(',')})
  --damping F               OBC's Hessian dampening, a fraction of its mean diagonal (default ${DEFAULT_DAMPING})
  --name NAME               file and model name stem (default: the model file's name)
  --json                    print the summary as JSON instead of the table and snippet

Calibrate on training data, not on the split you score: OBC fits each layer to its calibration inputs.`,
  options: {
    out: { type: 'string' },
    unstructured: { type: 'string' },
    nm: { type: 'string' },
    method: { type: 'string' },
    calibration: { type: 'string' },
    'calibration-samples': { type: 'string' },
    layers: { type: 'string' },
    damping: { type: 'string' },
    name: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, positionals }) {
    const scratch = await mkdtemp(path.join(tmpdir(), 'pbh-prune-'));
    try {
      const request = parsePruneRequest(values, positionals);
      const { model } = await readOnnxModel(request.model).catch((e: unknown) => {
        if (e instanceof OnnxFormatError) throw new UsageError(e.message);
        const code = (e as NodeJS.ErrnoException).code;
        throw new UsageError(code === 'ENOENT' ? `${request.model}: no such model file` : `${request.model}: ${(e as Error).message}`);
      });
      const calibration = request.calibration
        ? await resolveCalibration(request.calibration, request.model, request.calibrationSamples, scratch)
        : null;
      const summary = await runPrunePython(request, calibration, (line) => process.stderr.write(`pbh prune: ${line}\n`));
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
      const skipped = summary.skipped_layers.map((s) => `  not pruned: ${s.node} (${s.op}): ${s.reason}`);
      const seconds = Object.entries(summary.seconds).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ');
      process.stdout.write(`${await variantTable(summary)}\n${skipped.join('\n')}${skipped.length ? '\n' : ''}time: ${seconds}\n\n${configSnippet(source, summary)}\n`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof PruneUsageError || e instanceof DatasetError) throw new UsageError(e.message);
      throw e;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  },
};
