import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { findVenvPython } from '../packages/core/src/worker/venv.js';
import { pbh, tempDir, writeConfig } from './helpers.js';
import { buildLlms, llmConfig, llmRows } from './llms.js';
import { LLMS, ROOT } from './suite.js';

// Architectures the four trained models do not cover (python/untrained_llms.py says what each adds).
const ARCHITECTURES = ['gemma', 'opt', 'falcon', 'bloom', 'gpt_neox'];
const ENGINES = ['onnxruntime', 'openvino', 'transformers'];

describe('more decoder architectures as users save them (python/untrained_llms.py)', () => {
  let folder = '';

  beforeAll(async () => {
    await buildLlms();
    folder = await tempDir('pbh-llm-arch-');
    // buildLlms has found the venv (it throws without one).
    const python = findVenvPython()?.python ?? 'python3';
    const built = await execa(python, [path.join(ROOT, 'python', 'untrained_llms.py'), folder, path.join(LLMS, 'llama_gqa', 'hf'), ...ARCHITECTURES], { cwd: ROOT, reject: false });
    expect(built.exitCode, built.stderr).toBe(0);
  }, 600_000);

  it('exports each Hugging Face folder once and runs it on ONNX Runtime, OpenVINO and transformers, gated and scored alike', async () => {
    const dir = await tempDir('pbh-llm-arch-run-');
    const db = path.join(dir, 'arch.duckdb');
    const models = ARCHITECTURES.map((name) => ({ name, path: path.join(folder, name) }));
    const engines = [
      { name: 'onnxruntime', options: { intraOpNumThreads: 1 } },
      { name: 'openvino', options: { threads: 1 } },
      { name: 'transformers', options: { threads: 1 } },
    ];
    const config = await writeConfig(dir, 'arch.yaml', llmConfig('llm-architectures', models, engines, { prompts: 2 }));
    const r = await pbh(['run', config, '--db', db], { timeoutMs: 900_000 });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const rows = await llmRows(db);
    for (const model of ARCHITECTURES) {
      const mine = rows.filter((x) => x.model === model);
      expect(mine.map((x) => `${x.engine} ${x.status} ${x.error ?? ''}`.trim()).sort(), model).toEqual(ENGINES.map((e) => `${e} ok`).sort());
      const nll: number[] = [];
      for (const row of mine) {
        const g = JSON.parse(row.generation!);
        if (row.engine !== 'onnxruntime') expect(g.gate, `${model} on ${row.engine}`).toMatchObject({ reference_engine: 'onnxruntime', passed: true, rule: 'exact' });
        nll.push(g.perplexity.nll_nats);
      }
      // One model, three implementations, fp32: the same text scores the same.
      expect(Math.max(...nll) - Math.min(...nll), `${model}: ${nll.join(', ')}`).toBeLessThan(1e-3);
      expect(JSON.parse(mine[0]!.source!)).toMatchObject({ format: 'hf_transformers', path: path.join(folder, model) });
    }
  }, 900_000);
});
