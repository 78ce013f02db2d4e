import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processCpuNs, waitQuiet } from '../../src/system/quiet.js';

const linux = process.platform === 'linux';
const children: ChildProcess[] = [];

/** A Node process that prints "go" and then spins for `spinMs` of wall time (or sleeps), then lingers asleep. */
async function child(spinMs: number): Promise<number> {
  const code = `process.stdout.write('go\\n'); const end = Date.now() + ${spinMs}; while (Date.now() < end); setTimeout(() => {}, 60000);`;
  const c = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(c);
  await new Promise<void>((resolve) => c.stdout!.once('data', () => resolve()));
  return c.pid!;
}

afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

describe.runIf(linux)('waitQuiet: the pause until the resident processes stop using the cores', () => {
  it('returns after one window when the processes sleep', async () => {
    const pid = await child(0);
    const w = await waitQuiet([pid], 5000);
    expect(w.quiet).toBe(true);
    // One 10 ms window; a loaded machine may fire the timer late, never by seconds.
    expect(w.waitedMs).toBeLessThan(2000);
  });

  it('waits while a process spins, and returns once it has stopped', async () => {
    // Two spinners: on a loaded machine each may lose its core for a window, both together hardly.
    const pids = await Promise.all([child(300), child(300)]);
    const w = await waitQuiet(pids, 20_000);
    expect(w.quiet).toBe(true);
    // They spun 300 ms of wall time from "go": the wait cannot end much before that, whatever the machine's load.
    expect(w.waitedMs).toBeGreaterThanOrEqual(150);
  });

  it('gives up at maxMs with the processes still busy', async () => {
    const pid = await child(20_000);
    const w = await waitQuiet([pid], 100);
    expect(w.quiet).toBe(false);
    expect(w.waitedMs).toBeGreaterThanOrEqual(100);
  });

  it('counts a process that has exited as quiet', async () => {
    const w = await waitQuiet([2 ** 22 + 12345], 5000);
    expect(w.quiet).toBe(true);
  });
});

describe('processCpuNs', () => {
  it('reads /proc/PID/stat ticks where no thread has a schedstat', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'pbh-proc-'));
    mkdirSync(path.join(root, '42'));
    // utime 7 and stime 3 ticks are fields 14 and 15; the name may hold spaces and parentheses.
    writeFileSync(path.join(root, '42', 'stat'), '42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 1 0 0\n');
    expect(processCpuNs(42, root)).toBe(10 * 1e7);
    expect(processCpuNs(43, root)).toBeNull();
  });

  it.runIf(linux)('grows while this process runs', () => {
    const before = processCpuNs(process.pid)!;
    const end = performance.now() + 30;
    while (performance.now() < end);
    expect(processCpuNs(process.pid)! - before).toBeGreaterThan(0);
  });
});
