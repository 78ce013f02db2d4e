import { execa } from 'execa';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { findVenvPython } from '../packages/core/src/worker/venv.js';
import { LLMS, ROOT } from './suite.js';

const Part = z.object({ path: z.string() }).passthrough();
const Summary = z.object({
  held_out: z.string(),
  prompts: z.string(),
  models: z.record(z.string(), z.object({ architecture: z.string(), hf: Part, onnx: Part, openvino: z.record(z.string(), z.unknown()), genai: z.record(z.string(), z.unknown()) })),
});

let python = '';

describe('python/generate_llms.py: Llama (GQA), GPT-2, Qwen2 and Phi-3 as users have them', () => {
  beforeAll(async () => {
    const venv = findVenvPython();
    expect(venv, 'the project venv (npx pbh doctor --fix --engine llm)').toBeDefined();
    python = venv!.python;
    // A no-op when .cache/llms is current; about a minute on 2 cores when not.
    const result = await execa(python, [path.join(ROOT, 'python', 'generate_llms.py')], { cwd: ROOT, reject: false, env: { PYTHONDONTWRITEBYTECODE: '1' } });
    expect(result.exitCode, result.stderr).toBe(0);
    const summary = Summary.parse(JSON.parse(result.stdout));
    expect(Object.keys(summary.models).sort()).toEqual(['gpt2', 'llama_gqa', 'phi3', 'qwen2']);
  }, 300_000);

  it('loads in transformers, generates varied greedy text, and its ONNX, OpenVINO and ORT GenAI exports reproduce its logits (pytest)', async () => {
    const tests = path.join(ROOT, 'python', 'tests', 'test_generate_llms.py');
    // -p no:cacheprovider: no .pytest_cache written into the source tree.
    const result = await execa(python, ['-m', 'pytest', '-q', '-rs', '-p', 'no:cacheprovider', tests], { reject: false, env: { PYTHONDONTWRITEBYTECODE: '1', PBH_LLMS: LLMS } });
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/\d+ passed/);
    expect(result.stdout).not.toMatch(/failed|error/);
  });
});
