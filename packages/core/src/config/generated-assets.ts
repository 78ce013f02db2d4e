import { existsSync } from 'node:fs';
import path from 'node:path';
import type { LoadedExperiment } from './load.js';

/**
 * The repository's generators and the folders they write: the bundled configs point into these folders, which a
 * fresh clone does not have. A missing file under one of them is answered with the command that makes it, before
 * any cell runs, instead of one failed Profile per cell saying the file does not exist.
 */
const GENERATORS: readonly { folder: string; command: string }[] = [
  { folder: path.join('.cache', 'lm'), command: 'npm run generate:lm' },
  { folder: path.join('.cache', 'llms'), command: 'npm run generate:llms' },
  { folder: path.join('.cache', 'study'), command: 'npm run study' },
  { folder: path.join('.cache', 'suite'), command: 'npm run generate' },
  { folder: path.join('.cache', 'tf-models'), command: 'npm run generate:tf' },
];

export interface MissingAsset {
  /** The config field that names it, e.g. `models[byte_lm].path`. */
  field: string;
  /** Where it was looked for, absolute. */
  file: string;
  /** The repository folder the command runs in. */
  root: string;
  command: string;
}

/** Every file the config names: model paths and the dataset's files, each with the field that names it. */
function namedFiles(loaded: LoadedExperiment): { field: string; file: string }[] {
  const exp = loaded.experiment;
  const at = (p: string): string => path.resolve(loaded.dir, p);
  const files = exp.models.map((m) => ({ field: `models[${m.name}].path`, file: at(m.path) }));
  const d = exp.dataset as Record<string, unknown>;
  const root = typeof d['root'] === 'string' ? at(d['root']) : loaded.dir;
  for (const key of ['root', 'path', 'prompts', 'held_out', 'labels'] as const) {
    const v = d[key];
    if (typeof v !== 'string') continue;
    // An image folder's labels are relative to its root; every other path to the config.
    files.push({ field: `dataset.${key}`, file: key === 'labels' && d['kind'] === 'image-folder' ? path.resolve(root, v) : at(v) });
  }
  const inputs = d['inputs'];
  if (inputs && typeof inputs === 'object') {
    for (const [name, v] of Object.entries(inputs)) if (typeof v === 'string') files.push({ field: `dataset.inputs.${name}`, file: at(v) });
  }
  return files;
}

/** The generator whose folder holds `file`, and the repository folder above it. */
function generatorOf(file: string): { root: string; command: string } | null {
  for (const g of GENERATORS) {
    const marker = `${path.sep}${g.folder}${path.sep}`;
    const i = file.indexOf(marker);
    if (i >= 0) return { root: file.slice(0, i) || path.sep, command: g.command };
  }
  return null;
}

/** Files the config needs that a generator of this repository makes and that are not there yet. */
export function missingGeneratedAssets(loaded: LoadedExperiment): MissingAsset[] {
  const out: MissingAsset[] = [];
  for (const { field, file } of namedFiles(loaded)) {
    const g = generatorOf(file);
    if (g && !existsSync(file)) out.push({ field, file, ...g });
  }
  return out;
}

/** The message for missing generated files: what is missing, and the commands that make it, each once. */
export function missingAssetsMessage(configFile: string, missing: readonly MissingAsset[], cwd = process.cwd()): string {
  const rel = (p: string): string => path.relative(cwd, p) || '.';
  const lines = missing.slice(0, 5).map((m) => `  - ${m.field}: ${rel(m.file)}`);
  if (missing.length > 5) lines.push(`  - and ${missing.length - 5} more`);
  const commands = [...new Map(missing.map((m) => [`${m.root}\u0000${m.command}`, m])).values()].map((m) =>
    rel(m.root) === '.' ? m.command : `(cd ${rel(m.root)} && ${m.command})`,
  );
  return (
    `${rel(configFile)} needs generated files that are not there yet:\n${lines.join('\n')}\n` +
    `Make them first with ${commands.join(', then ')}, then run again. Nothing was run.`
  );
}
