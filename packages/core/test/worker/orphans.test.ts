import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKER_PYTHON_DIR } from '../../src/worker/client.js';
import { ECHO_WORKER, FIXTURE_MANIFEST, FIXTURES, processAlive, REPO_PYTHON, waitUntilGone } from './helpers.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
// Inside node_modules so the build resolves execa and zod like the sources do.
const BUILD_ROOT = fileURLToPath(new URL('../../../../node_modules/.cache/pbh-worker-orphans/', import.meta.url));
const BUILD = join(BUILD_ROOT, 'worker');

beforeAll(() => {
  // The parent script is plain Node (no TS loader on Node 20), so it runs a transpiled copy of src/worker and the
  // contracts it imports (dtypes, precisions).
  for (const folder of ['worker', 'contracts']) {
    mkdirSync(join(BUILD_ROOT, folder), { recursive: true });
    for (const file of readdirSync(join(SRC, folder)).filter((f) => f.endsWith('.ts'))) {
      const { outputText } = ts.transpileModule(readFileSync(join(SRC, folder, file), 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
      });
      writeFileSync(join(BUILD_ROOT, folder, file.replace(/\.ts$/, '.js')), outputText);
    }
  }
});

function spawnHarness(mode: string) {
  return execa('node', [join(FIXTURES, 'orphan_parent.mjs'), mode, BUILD, REPO_PYTHON, ECHO_WORKER, WORKER_PYTHON_DIR, FIXTURE_MANIFEST], {
    reject: false,
    buffer: false,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'ignore',
  });
}

interface Harness {
  process: ReturnType<typeof spawnHarness>;
  workerPid: number;
  nextLine: () => Promise<string>;
}

async function startHarness(mode: string): Promise<Harness> {
  const child = spawnHarness(mode);
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const nextLine = () => (lines.length ? Promise.resolve(lines.shift()!) : new Promise<string>((resolve) => waiters.push(resolve)));
  const workerPid = Number(await nextLine());
  expect(processAlive(workerPid)).toBe(true);
  child.stdin.write('go\n');
  return { process: child, workerPid, nextLine };
}

describe('no worker outlives its harness process', () => {
  it('when the harness simply runs out of work without disposing', async () => {
    const harness = await startHarness('natural');
    expect(await harness.process).toMatchObject({ exitCode: 0 });
    expect(await waitUntilGone(harness.workerPid)).toBe(true);
  });

  it('when the harness calls process.exit()', async () => {
    const harness = await startHarness('exit');
    expect(await harness.process).toMatchObject({ exitCode: 0 });
    expect(await waitUntilGone(harness.workerPid)).toBe(true);
  });

  it('when the harness dies of an uncaught exception', async () => {
    const harness = await startHarness('throw');
    expect(await harness.process).toMatchObject({ exitCode: 1 });
    expect(await waitUntilGone(harness.workerPid)).toBe(true);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('when the harness gets %s while the worker is busy, and the signal still ends it', async (signal) => {
    const harness = await startHarness('wait');
    expect(await harness.nextLine()).toBe('busy');
    harness.process.kill(signal);
    expect(await harness.process).toMatchObject({ signal });
    expect(await waitUntilGone(harness.workerPid)).toBe(true);
  });

  it('when the harness is SIGKILLed (no handler runs) while the worker is busy', async () => {
    const harness = await startHarness('wait');
    expect(await harness.nextLine()).toBe('busy');
    harness.process.kill('SIGKILL');
    expect(await harness.process).toMatchObject({ signal: 'SIGKILL' });
    expect(await waitUntilGone(harness.workerPid)).toBe(true);
  });
});
