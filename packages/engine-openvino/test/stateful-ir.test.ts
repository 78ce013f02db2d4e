import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildLlms } from '../../../test/llms.js';
import { LLMS, ROOT } from '../../../test/suite.js';

const python = path.join(ROOT, '.venv', 'bin', 'python');

describe("optimum-intel's stateful IR on the openvino engine's own decoder (pytest, packages/engine-openvino/test/python)", () => {
  beforeAll(buildLlms, 600_000);

  it("matches ONNX Runtime on the Optimum export step by step, and interleaved requests keep their own cache, on the IR and on the export fed through the binding", async () => {
    const PYTHONPATH = [path.join(ROOT, 'packages', 'core', 'python'), path.join(ROOT, 'packages', 'engine-openvino', 'python')].join(path.delimiter);
    const result = await execa(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', path.join(import.meta.dirname, 'python')], {
      reject: false,
      env: { PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH, LLMS },
    });
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/7 passed/);
  }, 300_000);
});
