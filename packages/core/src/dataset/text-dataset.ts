import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Dataset } from '../contracts/dataset.js';
import { DatasetError } from './errors.js';
import { readDatasetFile } from './read-file.js';

/** vLLM's random dataset: prompt lengths uniform in input_len × [1 − range_ratio, 1 + range_ratio], ids uniform over the vocabulary. */
export interface RandomPrompts {
  count: number;
  inputLen: number;
  rangeRatio: number;
  seed: number;
}

/**
 * Prompts (and held-out text) for a generate workload, as text: each model's own tokenizer turns them into ids
 * (harness/generate/tokens.ts); the bundled byte LM reads UTF-8 bytes. Random prompts are drawn per tokenizer.
 */
export interface TextDataset extends Dataset {
  kind: 'text';
  /** Prompt texts in file order; empty when the prompts are random. */
  texts: string[];
  random: RandomPrompts | null;
  /** Where the prompts came from: the file's form, or "random". */
  form: 'jsonl' | 'sharegpt' | 'random';
  /** Held-out text for perplexity; null when the config names no held_out file. */
  heldOutText: string | null;
}

const PromptLine = z.strictObject({ prompt: z.string().min(1) });
/** ShareGPT's conversations (vLLM's sharegpt dataset): the prompt is the first human turn. */
const Conversation = z.looseObject({ conversations: z.array(z.looseObject({ from: z.string(), value: z.string() })).min(1) });

async function readOrExplain(file: string, field: string): Promise<Buffer> {
  return readDatasetFile(file, `dataset.${field}: ${file} cannot be read (missing?). It is relative to the config file; npm run generate:lm writes the bundled LM's data into .cache/lm/data.`);
}

export function isTextDataset(d: Dataset): d is TextDataset {
  return (d as Partial<TextDataset>).kind === 'text';
}

function firstHumanTurn(entry: unknown, where: string): string | null {
  const ok = Conversation.safeParse(entry);
  if (!ok.success) throw new DatasetError(`${where}: not a ShareGPT conversation ({"conversations": [{"from": "human", "value": "..."}, ...]}): ${ok.error.issues[0]?.message ?? ''}`);
  const turn = ok.data.conversations.find((t) => t.from === 'human' || t.from === 'user');
  return turn && turn.value.trim() !== '' ? turn.value : null;
}

/** Prompt texts from JSONL of {"prompt": ...} lines, or ShareGPT conversations (a JSON array, or JSONL of them). */
export function parsePrompts(file: string, text: string, limit?: number): { texts: string[]; form: 'jsonl' | 'sharegpt' } {
  const take = (texts: string[]): string[] => (limit === undefined ? texts : texts.slice(0, limit));
  if (text.trimStart().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new DatasetError(`${file} starts with "[" but is not JSON (${(e as Error).message}); a ShareGPT file is a JSON array of {"conversations": [...]}.`);
    }
    const entries = z.array(z.unknown()).parse(parsed);
    const texts = entries.map((e, i) => firstHumanTurn(e, `${file} entry ${i}`)).filter((t): t is string => t !== null);
    return { texts: take(texts), form: 'sharegpt' };
  }
  const texts: string[] = [];
  let form: 'jsonl' | 'sharegpt' = 'jsonl';
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new DatasetError(`${file} line ${i + 1} is not JSON; each line must be {"prompt": "..."} (or a ShareGPT {"conversations": [...]}).`);
    }
    if (typeof parsed === 'object' && parsed !== null && 'conversations' in parsed) {
      form = 'sharegpt';
      const turn = firstHumanTurn(parsed, `${file} line ${i + 1}`);
      if (turn !== null) texts.push(turn);
    } else {
      const ok = PromptLine.safeParse(parsed);
      if (!ok.success) throw new DatasetError(`${file} line ${i + 1}: ${ok.error.issues.map((x) => `${x.path.join('.') || 'line'}: ${x.message}`).join('; ')}; each line must be {"prompt": "..."}.`);
      texts.push(ok.data.prompt);
    }
    if (limit !== undefined && texts.length >= limit) break;
  }
  return { texts, form };
}

export async function loadTextDataset(opts: { name: string; prompts?: string; random?: RandomPrompts; heldOut?: string; limit?: number }): Promise<TextDataset> {
  const hash = createHash('sha256');
  let texts: string[] = [];
  let form: TextDataset['form'] = 'random';
  if (opts.prompts !== undefined) {
    const bytes = await readOrExplain(opts.prompts, 'prompts');
    hash.update(bytes);
    ({ texts, form } = parsePrompts(opts.prompts, bytes.toString('utf8'), opts.limit));
    if (texts.length === 0) throw new DatasetError(`${opts.prompts} has no prompts; add lines of {"prompt": "..."}.`);
  } else if (opts.random) {
    hash.update(JSON.stringify(opts.random));
  } else {
    throw new DatasetError('dataset: a text dataset needs prompts (a JSONL or ShareGPT file) or random ({input_len, num_prompts}).');
  }
  const held = opts.heldOut ? await readOrExplain(opts.heldOut, 'held_out') : null;
  if (held) hash.update(held);
  return {
    kind: 'text',
    name: opts.name,
    manifestSha256: hash.digest('hex'),
    size: opts.random?.count ?? texts.length,
    inputNames: ['prompt'],
    hasLabels: false,
    texts,
    random: opts.prompts === undefined ? (opts.random ?? null) : null,
    form,
    heldOutText: held ? held.toString('utf8') : null,
    read(): never {
      throw new DatasetError(`dataset ${opts.name} is a text dataset: it feeds the generate workload only (add a generate: block to the config).`);
    },
  };
}
