import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { LM_IO } from '../../contracts/generation.js';
import type { ModelFacts } from '../../contracts/profile.js';
import type { TensorSpec } from '../../contracts/tensor.js';
import { CellConfigError } from '../errors.js';

/**
 * A language model's cache, as the generate workload sizes it: PBH's fixed-capacity cache graph
 * (contracts/generation.ts), or the Hugging Face decoder layout Optimum exports (a cache per layer that grows by
 * one position per token).
 */
export type LmModel =
  | { layout: 'pbh_cache'; cacheShape: number[]; capacity: number; kvBytesPerToken: null }
  | { layout: 'hf_decoder'; cacheShape: null; capacity: number | null; kvBytesPerToken: number; layers: number; kvHeads: number; headDim: number };

const DTYPE_BYTES: Record<string, number> = { float32: 4, float16: 2, bfloat16: 2 };
const PAST = /^past_key_values\.(\d+)\.key$/;

/** The positions a Hugging Face config allows (max_position_embeddings; GPT-2 says n_positions). */
const HfConfigSchema = z.looseObject({ max_position_embeddings: z.number().int().positive().optional(), n_positions: z.number().int().positive().optional() });

/** The positions an ONNX Runtime GenAI folder's decoder takes (genai_config.json, model.context_length). */
const GenAiConfigSchema = z.looseObject({ model: z.looseObject({ context_length: z.number().int().positive().optional() }).optional() });

function hfCapacity(files: string[]): number | null {
  for (const file of files) {
    const folder = existsSync(file) && statSync(file).isDirectory() ? file : path.dirname(file);
    const genai = path.join(folder, 'genai_config.json');
    if (existsSync(genai)) {
      const parsed = GenAiConfigSchema.safeParse(JSON.parse(readFileSync(genai, 'utf8')));
      if (parsed.success && parsed.data.model?.context_length) return parsed.data.model.context_length;
    }
    const config = path.join(folder, 'config.json');
    if (!existsSync(config)) continue;
    const parsed = HfConfigSchema.safeParse(JSON.parse(readFileSync(config, 'utf8')));
    if (parsed.success) return parsed.data.max_position_embeddings ?? parsed.data.n_positions ?? null;
  }
  return null;
}

function pbhCache(facts: ModelFacts, model: string): LmModel {
  const find = (list: TensorSpec[], name: string, where: string): TensorSpec => {
    const s = list.find((t) => t.name === name);
    if (!s) throw new CellConfigError(`model "${model}" has past_key but no ${where} "${name}": PBH's cache graph (contracts/generation.ts) has input_ids, past_length, past_key, past_value -> logits, present_key, present_value.`);
    return s;
  };
  for (const name of [LM_IO.inputIds, LM_IO.pastLength, LM_IO.pastValue]) find(facts.inputs, name, 'input');
  for (const name of [LM_IO.logits, LM_IO.presentKey, LM_IO.presentValue]) find(facts.outputs, name, 'output');
  const key = find(facts.inputs, LM_IO.pastKey, 'input');
  if (key.shape.length !== 4 || !key.shape.every((d): d is number => typeof d === 'number')) {
    throw new CellConfigError(`model "${model}" input past_key has shape [${key.shape.join(', ')}]; PBH's cache graph has a fixed-capacity cache [layers, heads, capacity, head_dim].`);
  }
  return { layout: 'pbh_cache', cacheShape: key.shape, capacity: key.shape[2]!, kvBytesPerToken: null };
}

/** The model's cache layout from its graph's inputs (and, for a Hugging Face export, the config.json beside it). */
export function lmModelOf(facts: ModelFacts, files: string[], model: string): LmModel {
  const names = facts.inputs.map((t) => t.name);
  if (names.includes(LM_IO.pastKey)) return pbhCache(facts, model);
  const pasts = facts.inputs.filter((t) => PAST.test(t.name));
  if (pasts.length === 0 || !names.includes(LM_IO.inputIds) || !facts.outputs.some((t) => t.name === LM_IO.logits)) {
    throw new CellConfigError(
      `model "${model}" has inputs ${names.join(', ')}: the generate workload needs a decoder with a key-value cache, either a Hugging Face model ` +
        '(a folder with config.json, weights and tokenizer.json; or its ONNX export by optimum-cli export onnx --task text-generation-with-past, ' +
        'past_key_values.N.key/value -> logits, present.N.key/value) or PBH\'s own cache graph (contracts/generation.ts, python/generate_lm.py).',
    );
  }
  const first = pasts[0]!;
  const [, kvHeads, , headDim] = first.shape;
  if (first.shape.length !== 4 || typeof kvHeads !== 'number' || typeof headDim !== 'number') {
    throw new CellConfigError(`model "${model}" input ${first.name} has shape [${first.shape.join(', ')}]; PBH reads the Hugging Face layout [batch, kv_heads, past_sequence, head_dim] with kv_heads and head_dim fixed.`);
  }
  const bytes = DTYPE_BYTES[first.dtype];
  if (bytes === undefined) throw new CellConfigError(`model "${model}" keeps its cache in ${first.dtype}; PBH sizes float32, float16 and bfloat16 caches.`);
  return { layout: 'hf_decoder', cacheShape: null, capacity: hfCapacity(files), kvBytesPerToken: 2 * pasts.length * kvHeads * headDim * bytes, layers: pasts.length, kvHeads, headDim };
}
