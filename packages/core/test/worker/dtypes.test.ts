import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DTYPES } from '../../src/contracts/tensor.js';
import { WORKER_PYTHON_DIR } from '../../src/worker/client.js';
import { REPO_PYTHON } from './helpers.js';

// Python cannot import the TypeScript table, so pbh_worker/channel.py keeps its own: this is what keeps them one.
const PRINT_TABLE = 'import json; from pbh_worker.channel import DTYPES; print(json.dumps({n: d.itemsize for n, d in DTYPES.items()}))';

describe('wire dtypes', () => {
  it("pbh_worker's numpy table has the names and byte sizes of contracts/tensor.ts DTYPES", async () => {
    const { stdout } = await execa(REPO_PYTHON, ['-c', PRINT_TABLE], { env: { PYTHONPATH: WORKER_PYTHON_DIR } });
    const python = JSON.parse(stdout) as Record<string, number>;
    const typescript = Object.fromEntries(Object.entries(DTYPES).map(([name, d]) => [name, d.bytes]));
    expect(python).toEqual(typescript);
    // The typed array that carries each dtype holds elements of exactly that many bytes.
    for (const [name, d] of Object.entries(DTYPES)) expect([name, d.array.BYTES_PER_ELEMENT]).toEqual([name, d.bytes]);
  });
});
