import path from 'node:path';
import { execa } from 'execa';
import { findVenvPython } from '../packages/core/src/worker/venv.js';
import { queryJson } from './helpers.js';
import { LLMS, ROOT } from './suite.js';

/** python/generate_llms.py once (a no-op when .cache/llms is current); throws its stderr when it fails. */
export async function buildLlms(): Promise<void> {
  const venv = findVenvPython();
  if (!venv) throw new Error('the LLM tests need the project venv: npx pbh doctor --fix --engine pytorch --engine llm');
  const built = await execa(venv.python, [path.join(ROOT, 'python', 'generate_llms.py')], { cwd: ROOT, reject: false });
  if (built.exitCode !== 0) throw new Error(`python/generate_llms.py failed (exit ${built.exitCode}):\n${built.stderr}`);
}

/** A project LLM's Hugging Face folder as a models[] entry. */
export const hf = (name: string) => ({ name, path: path.join(LLMS, name, 'hf') });

/** A generate config over the project's prompts and held-out text: `prompts` requests of `maxNew` tokens, one session. */
export function llmConfig(
  name: string,
  models: unknown[],
  engines: unknown[],
  { prompts = 4, maxNew = 8, generate = {}, dataset = {} }: { prompts?: number; maxNew?: number; generate?: Record<string, unknown>; dataset?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return {
    name,
    dataset: { kind: 'text', prompts: path.join(LLMS, 'data', 'prompts.jsonl'), held_out: path.join(LLMS, 'data', 'held_out.txt'), limit: prompts, ...dataset },
    models,
    generate: { max_new_tokens: maxNew, gate_prompts: 2, ...generate },
    engines,
    batch_sizes: [1],
    warmup_batches: 1,
    sessions: 1,
    rounds: { max_sessions: 1 },
  };
}

/** A stored LLM Profile as the tests read it: JSON parts as text, engine by its entry label. */
export interface LlmRow {
  model: string;
  engine: string;
  status: string;
  error: string | null;
  generation: string | null;
  source: string | null;
  precision: string | null;
  facts: string | null;
  scenario: string | null;
}

export function llmRows(db: string): Promise<LlmRow[]> {
  return queryJson<LlmRow>(
    db,
    "SELECT model_name AS model, coalesce(engine_label, engine_name) AS engine, status, error, json_extract(profile_json, '$.generation')::VARCHAR AS generation, json_extract(profile_json, '$.model.source')::VARCHAR AS source, json_extract(profile_json, '$.engine.precision')::VARCHAR AS precision, json_extract(profile_json, '$.engine.facts')::VARCHAR AS facts, json_extract(profile_json, '$.scenario')::VARCHAR AS scenario FROM profiles ORDER BY created_at",
  );
}
