import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../../test/suite.js';

const python = path.join(ROOT, '.venv', 'bin', 'python');

describe("an int8 .tflite's boundary (pytest, packages/engine-litert/test/python)", () => {
  it("quantizes inputs as the export's QuantizeLinear; the converter's Relu removal and uint8 activations are exact", async () => {
    execFileSync(python, [path.join(ROOT, 'python', 'generate_tf_models.py')], { stdio: 'ignore' });
    const PYTHONPATH = [path.join(ROOT, 'packages', 'core', 'python'), path.join(ROOT, 'packages', 'engine-litert', 'python'), path.join(ROOT, 'python')].join(path.delimiter);
    const result = await execa(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', path.join(import.meta.dirname, 'python')], {
      reject: false,
      env: { PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH, MODELS: path.join(ROOT, '.cache', 'tf-models') },
    });
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/3 passed/);
  });
});
