import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { missingAssetsMessage, missingGeneratedAssets } from '../../src/config/generated-assets.js';
import { parseExperiment } from '../../src/config/load.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
const work = mkdtempSync(path.join(os.tmpdir(), 'pbh-assets-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A repository-shaped folder: configs/ beside .cache/, as the bundled configs expect. */
function repo(name: string, config: string): string {
  const root = path.join(work, name);
  mkdirSync(path.join(root, 'configs'), { recursive: true });
  const file = path.join(root, 'configs', 'c.yaml');
  writeFileSync(file, config);
  return file;
}

const LM = `name: g
dataset: { kind: text, prompts: ../.cache/lm/data/prompts.jsonl }
models: [{ name: byte_lm, path: ../.cache/lm/models/byte_lm.onnx }]
engines: [{ name: onnxruntime }]
batch_sizes: [1]
`;

describe('generated assets a config needs', () => {
  it('names each missing file, its field and the generator that makes it', () => {
    const file = repo('lm', LM);
    const missing = missingGeneratedAssets(parseExperiment(LM, file));
    expect(missing.map((m) => [m.field, m.command])).toEqual([
      ['models[byte_lm].path', 'npm run generate:lm'],
      ['dataset.prompts', 'npm run generate:lm'],
    ]);
    const message = missingAssetsMessage(file, missing, path.join(work, 'lm'));
    expect(message).toContain('models[byte_lm].path: .cache/lm/models/byte_lm.onnx');
    // One command, said once, run where the repository is.
    expect(message.match(/npm run generate:lm/g)).toHaveLength(1);
    expect(message).toContain('Make them first with npm run generate:lm');
  });

  it('says nothing once the files exist, and nothing of files outside the generated folders', () => {
    const file = repo('made', LM.replace('../.cache/lm/data/prompts.jsonl', '../mine.jsonl'));
    mkdirSync(path.join(work, 'made', '.cache', 'lm', 'models'), { recursive: true });
    writeFileSync(path.join(work, 'made', '.cache', 'lm', 'models', 'byte_lm.onnx'), '');
    expect(missingGeneratedAssets(parseExperiment(LM.replace('../.cache/lm/data/prompts.jsonl', '../mine.jsonl'), file))).toEqual([]);
  });

  it.skipIf(!existsSync(CLI))('pbh run stops before any cell with the command, and writes no database', () => {
    const file = repo('cli', LM);
    const db = path.join(work, 'cli', 'out.duckdb');
    const r = spawnSync(process.execPath, [CLI, 'run', file, '--db', db], { cwd: path.join(work, 'cli'), encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/needs generated files that are not there yet[\s\S]*npm run generate:lm[\s\S]*Nothing was run/);
    expect(existsSync(db)).toBe(false);
  });
});
