/** The config snippet `pbh quantize` prints: the source model and every variant as models[] entries, ready to paste. */
import path from 'node:path';
import { stringify } from 'yaml';
import type { SnippetSource } from '../prune/snippet.js';
import type { QuantizeSummary } from './python.js';

/** Model names follow the files: STEM_METHOD_TAG (e.g. digits_resnet_static_int8). */
export function quantizedName(stem: string, method: string, tag: string): string {
  return `${stem}_${method}_${tag}`;
}

export function quantizeSnippet(source: SnippetSource, summary: QuantizeSummary, cwd = process.cwd()): string {
  const rel = (file: string): string => path.relative(cwd, path.resolve(file)).split(path.sep).join('/');
  const common = {
    ...(source.family ? { family: source.family } : {}),
    ...(source.weights === 'trained' || source.weights === 'random' ? { weights: source.weights } : {}),
  };
  const models = [
    { name: source.stem, path: rel(source.model), ...common },
    ...summary.variants.map((v) => ({ name: quantizedName(source.stem, v.method, v.tag), path: rel(v.file), ...common })),
  ];
  return [
    '# models[] entries for an experiment config (paths relative to the folder pbh quantize ran in: make them relative to',
    '# the config file). Each quantized file carries its method, dtypes and calibration in its metadata, which pbh run',
    '# records; a static or dynamic one runs as an int8 model (engines[].precision defaults to it), a weight-only one in the',
    "# model's float type with its compressed weights; each engine reports what it executed and the weights it read.",
    stringify({ models }, { lineWidth: 0, flowCollectionPadding: true, collectionStyle: 'block' }).trimEnd(),
  ].join('\n');
}
