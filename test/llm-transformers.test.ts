import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { pbh, queryJson, tempDir, writeConfig } from './helpers.js';
import { buildLlms } from './llms.js';
import { LLMS } from './suite.js';

interface Row {
  engine: string;
  status: string;
  error: string | null;
  facts: string | null;
  generation: string | null;
}

describe('transformers with a static cache and a compiled decode step', () => {
  beforeAll(buildLlms, 600_000);

  it('runs StaticCache eager and torch.compiled, each gated token for token against ONNX Runtime; compile without it is refused', async () => {
    const dir = await tempDir('pbh-llm-static-');
    const db = path.join(dir, 'static.duckdb');
    const config = await writeConfig(dir, 'static.yaml', {
      name: 'llm-static-cache',
      dataset: { kind: 'text', prompts: path.join(LLMS, 'data', 'prompts.jsonl'), held_out: path.join(LLMS, 'data', 'held_out.txt'), limit: 3 },
      models: [{ name: 'llama_gqa', path: path.join(LLMS, 'llama_gqa', 'hf') }],
      generate: { max_new_tokens: 8, gate_prompts: 2 },
      engines: [
        { name: 'onnxruntime', options: { intraOpNumThreads: 1 } },
        { name: 'transformers', label: 'static', options: { threads: 1, cache: 'static' } },
        { name: 'transformers', label: 'compiled', options: { threads: 1, cache: 'static', maxCacheLen: 256, compile: true } },
        { name: 'transformers', label: 'compile-dynamic', options: { threads: 1, compile: true } },
      ],
      batch_sizes: [1],
      warmup_batches: 1,
      sessions: 1,
      rounds: { max_sessions: 1 },
    });
    const r = await pbh(['run', config, '--db', db], { timeoutMs: 900_000 });
    expect(r.code, r.stderr).toBe(1);
    const rows = await queryJson<Row>(
      db,
      "SELECT coalesce(engine_label, engine_name) AS engine, status, error, json_extract(profile_json, '$.engine.facts')::VARCHAR AS facts, json_extract(profile_json, '$.generation')::VARCHAR AS generation FROM profiles",
    );
    const by = new Map(rows.map((x) => [x.engine, x]));
    for (const label of ['static', 'compiled']) {
      const row = by.get(label)!;
      expect(row.status, row.error ?? '').toBe('ok');
      const g = JSON.parse(row.generation!);
      expect(g.gate, label).toMatchObject({ reference_engine: 'onnxruntime', rule: 'exact', passed: true });
      expect(g.perplexity.bits_per_byte).toBeGreaterThan(0);
    }
    expect(JSON.parse(by.get('static')!.facts!)).toMatchObject({ cache: 'StaticCache per request, 256 positions', compiled: null });
    const compiled = JSON.parse(by.get('compiled')!.facts!);
    expect(compiled.cache).toBe('StaticCache per request, 256 positions');
    expect(compiled.compiled).toMatch(/^torch\.compile \(inductor, dynamic=False\) of the one-token decode step; prefill eager; compiled at load in/);
    expect(by.get('compile-dynamic')).toMatchObject({ status: 'failed' });
    expect(by.get('compile-dynamic')!.error).toMatch(/options\.compile needs options\.cache: static/);
  }, 900_000);
});
