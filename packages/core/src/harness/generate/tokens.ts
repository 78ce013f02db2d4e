import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import type { TokenizerFacts } from '../../contracts/generation.js';
import type { TextDataset } from '../../dataset/text-dataset.js';
import { findProjectRoot, findVenvPython, VENV_FIX } from '../../worker/venv.js';
import { CellConfigError } from '../errors.js';

export interface Tokenized {
  tokenizer: TokenizerFacts;
  prompts: number[][];
  heldOut: number[] | null;
  /** UTF-8 bytes of the held-out text whose tokens perplexity predicts (bits per byte's denominator). */
  heldOutBytesPredicted: number | null;
}

const AnswerSchema = z.object({
  tokenizer: z.object({ path: z.string(), sha256: z.string(), library: z.string(), model: z.string(), vocab_size: z.number().int() }),
  prompts: z.array(z.array(z.number().int())),
  held_out: z.array(z.number().int()).nullable(),
  held_out_bytes_predicted: z.number().int().nullable(),
});

/** The model's tokenizer.json: in the model's folder, or beside its file (Optimum exports and PBH's conversions put it there). */
export function tokenizerFileOf(modelFiles: string[]): string | null {
  for (const file of modelFiles) {
    const folder = existsSync(file) && statSync(file).isDirectory() ? file : path.dirname(file);
    const candidate = path.join(folder, 'tokenizer.json');
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** A seeded stream for the byte tokenizer's random prompts (mulberry32: 32-bit state, enough for ids < 256). */
function bytesRandom(dataset: TextDataset): number[][] {
  const r = dataset.random!;
  let state = r.seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const low = Math.max(1, Math.floor(r.inputLen * (1 - r.rangeRatio)));
  const high = Math.max(low, Math.ceil(r.inputLen * (1 + r.rangeRatio)));
  return Array.from({ length: r.count }, () => Array.from({ length: low + Math.floor(next() * (high - low + 1)) }, () => Math.floor(next() * 256)));
}

/** UTF-8 bytes as tokens: PBH's byte LM. */
export function byteTokens(dataset: TextDataset, window: number): Tokenized {
  const held = dataset.heldOutText === null ? null : [...Buffer.from(dataset.heldOutText, 'utf8')];
  let predicted = 0;
  if (held) for (let s = 0; s < held.length - 1; s += window) predicted += Math.max(0, Math.min(window, held.length - s) - 1);
  return {
    tokenizer: { kind: 'bytes', path: null, sha256: null, library: null, vocab_size: 256 },
    prompts: dataset.random ? bytesRandom(dataset) : dataset.texts.map((t) => [...Buffer.from(t, 'utf8')]),
    heldOut: held,
    heldOutBytesPredicted: held ? predicted : null,
  };
}

/** Ids from the model's tokenizer.json, by python -m tokenize_text (Hugging Face tokenizers), once, before any timing. */
export async function modelTokens(tokenizer: string, dataset: TextDataset, window: number): Promise<Tokenized> {
  const venv = findVenvPython();
  const root = findProjectRoot();
  if (!venv || !root) throw new CellConfigError(`tokenizing prompts with ${tokenizer} needs the project venv. Fix: ${VENV_FIX}`);
  const request = {
    tokenizer,
    prompts: dataset.random ? null : dataset.texts,
    random: dataset.random ? { count: dataset.random.count, input_len: dataset.random.inputLen, range_ratio: dataset.random.rangeRatio, seed: dataset.random.seed } : null,
    held_out: dataset.heldOutText,
    window,
  };
  const result = await execa(venv.python, ['-m', 'tokenize_text'], { input: JSON.stringify(request), env: { PYTHONPATH: path.join(root, 'python') }, reject: false, timeout: 10 * 60_000 });
  if (result.exitCode !== 0) {
    const said = result.stderr.split('\n').filter((l) => l.trim()).slice(-2).join(' ');
    const fix = /No module named 'tokenizers'/.test(said) ? ' Fix: npx pbh doctor --fix --engine llm' : '';
    throw new CellConfigError(`could not tokenize the prompts with ${tokenizer}: ${said || result.shortMessage}.${fix}`);
  }
  const answer = AnswerSchema.parse(JSON.parse(result.stdout));
  const t = answer.tokenizer;
  return {
    tokenizer: { kind: 'tokenizer.json', path: t.path, sha256: t.sha256, library: `${t.library} (${t.model})`, vocab_size: t.vocab_size },
    prompts: answer.prompts,
    heldOut: answer.held_out,
    heldOutBytesPredicted: answer.held_out_bytes_predicted,
  };
}
