/** The config snippet `pbh prune` prints: the dense model and every variant as models[] entries, ready to paste. */
import path from 'node:path';
import { stringify } from 'yaml';
import type { PruneSummary } from './python.js';

export interface SnippetSource {
  model: string;
  stem: string;
  family: string | null;
  /** The source's pbh.weights metadata: a pruned copy of trained weights is still trained (and scored). */
  weights: string | null;
}

/** Model names follow the files: STEM, STEM_METHOD_TAG (e.g. digits_resnet_obc_2of4). */
export function variantName(stem: string, method: string, tag: string): string {
  return `${stem}_${method}_${tag}`;
}

export function configSnippet(source: SnippetSource, summary: PruneSummary, cwd = process.cwd()): string {
  const rel = (file: string): string => path.relative(cwd, path.resolve(file)).split(path.sep).join('/');
  const common = {
    ...(source.family ? { family: source.family } : {}),
    ...(source.weights === 'trained' || source.weights === 'random' ? { weights: source.weights } : {}),
  };
  const models = [
    { name: source.stem, path: rel(source.model), ...common },
    ...summary.variants.map((v) => ({ name: variantName(source.stem, v.method, v.tag), path: rel(v.file), ...common })),
  ];
  return [
    '# models[] entries for an experiment config (paths relative to the folder pbh prune ran in: make them relative to',
    '# the config file). Each pruned file carries its method, kind, target and N:M in its metadata, which pbh run records.',
    stringify({ models }, { lineWidth: 0, flowCollectionPadding: true, collectionStyle: 'block' }).trimEnd(),
  ].join('\n');
}
