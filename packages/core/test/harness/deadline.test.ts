import { describe, expect, it } from 'vitest';
import { Deadline } from '../../src/harness/deadline.js';
import { CellTimeoutError, InterruptedError } from '../../src/harness/errors.js';

const never = new Promise<never>(() => undefined);

describe('Deadline', () => {
  it('passes through what settles in time', async () => {
    await expect(new Deadline(5, 'x').run(Promise.resolve(42))).resolves.toBe(42);
  });

  it('rejects what runs past the timeout and aborts its signal', async () => {
    const d = new Deadline(0.05, 'cell a');
    await expect(d.run(never)).rejects.toBeInstanceOf(CellTimeoutError);
    expect(d.signal.aborted).toBe(true);
    expect(() => d.check()).toThrow(/cell a ran past its timeout of 0.05 s/);
  });

  it('rejects every pending wait at once when interrupted', async () => {
    const d = new Deadline(60, 'cell b');
    const waits = [d.run(never), d.run(never)];
    d.interrupt();
    for (const w of waits) await expect(w).rejects.toBeInstanceOf(InterruptedError);
    expect(d.signal.reason).toBeInstanceOf(InterruptedError);
  });
});
