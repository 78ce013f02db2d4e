import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findVenvPython } from '../../src/worker/venv.js';

const TESTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../python/tests');

describe("the worker's measurement loop (pytest, packages/core/python/tests)", () => {
  it('passes on a fake engine and a simulated clock, with no runtime imported', async () => {
    const venv = findVenvPython();
    expect(venv, 'the project venv (npx pbh doctor --fix)').toBeDefined();
    // -p no:cacheprovider: no .pytest_cache written into the source tree.
    const result = await execa(venv!.python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', TESTS], { reject: false, env: { PYTHONDONTWRITEBYTECODE: '1' } });
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/\d+ passed/);
    expect(result.stdout).not.toMatch(/failed|error/);
  });
});
