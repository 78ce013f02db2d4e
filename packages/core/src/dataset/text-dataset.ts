import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Dataset } from '../contracts/dataset.js';
import { DatasetError } from './errors.js';
import { readDatasetFile } from './read-file.js';

/** Prompts (and held-out text) for a generate workload; tokens are UTF-8 bytes, as the bundled byte LM reads them. */
export interface TextDataset extends Dataset {
  kind: 'text';
  prompts: number[][];
  /** Held-out bytes for perplexity; null when the config names no held_out file. */
  heldOut: number[] | null;
}

const PromptLine = z.strictObject({ prompt: z.string().min(1) });

async function readOrExplain(file: string, field: string): Promise<Buffer> {
  return readDatasetFile(file, `dataset.${field}: ${file} cannot be read (missing?). It is relative to the config file; npm run generate:lm writes the bundled LM's data into .cache/lm/data.`);
}

export function isTextDataset(d: Dataset): d is TextDataset {
  return (d as Partial<TextDataset>).kind === 'text';
}

export async function loadTextDataset(opts: { name: string; prompts: string; heldOut?: string; limit?: number }): Promise<TextDataset> {
  const bytes = await readOrExplain(opts.prompts, 'prompts');
  const lines = bytes.toString('utf8').split('\n');
  const prompts: number[][] = [];
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new DatasetError(`${opts.prompts} line ${i + 1} is not JSON; each line must be {"prompt": "..."}.`);
    }
    const ok = PromptLine.safeParse(parsed);
    if (!ok.success) throw new DatasetError(`${opts.prompts} line ${i + 1}: ${ok.error.issues.map((x) => `${x.path.join('.') || 'line'}: ${x.message}`).join('; ')}; each line must be {"prompt": "..."}.`);
    prompts.push([...Buffer.from(ok.data.prompt, 'utf8')]);
    if (opts.limit !== undefined && prompts.length >= opts.limit) break;
  }
  if (prompts.length === 0) throw new DatasetError(`${opts.prompts} has no prompts; add lines of {"prompt": "..."}.`);
  const held = opts.heldOut ? await readOrExplain(opts.heldOut, 'held_out') : null;
  const hash = createHash('sha256').update(bytes);
  if (held) hash.update(held);
  return {
    kind: 'text',
    name: opts.name,
    manifestSha256: hash.digest('hex'),
    size: prompts.length,
    inputNames: ['prompt'],
    hasLabels: false,
    prompts,
    heldOut: held ? [...held] : null,
    read(): never {
      throw new DatasetError(`dataset ${opts.name} is a text dataset: it feeds the generate workload only (add a generate: block to the config).`);
    },
  };
}
