import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { MetricContext } from '../../src/contracts/metric.js';
import { peakMemoryMetric } from '../../src/metrics/peak-memory.js';
import { processMetricContext } from '../../src/metrics/process-stats.js';

const MIB = 2 ** 20;

// A process that, on each line in, fills 200 MiB, frees it and waits until its RSS is back down, then answers.
const SPIKER = `
const { createInterface } = require('node:readline');
const settle = () => { global.gc(); if (process.memoryUsage.rss() > 120 * 2 ** 20) setTimeout(settle, 2); else console.log('done'); };
const spike = () => { let b = Buffer.allocUnsafeSlow(200 * 2 ** 20).fill(1); b = null; settle(); };
createInterface({ input: process.stdin }).on('line', spike);
console.log('ready');
`;

let child: ChildProcessWithoutNullStreams | undefined;
afterEach(() => child?.kill());

async function nextLine(c: ChildProcessWithoutNullStreams): Promise<string> {
  const [chunk] = (await once(c.stdout, 'data')) as [Buffer];
  return chunk.toString().trim();
}

async function spiker(): Promise<ChildProcessWithoutNullStreams> {
  const c = spawn(process.execPath, ['--expose-gc', '-e', SPIKER]);
  expect(await nextLine(c)).toBe('ready');
  return c;
}

async function spike(c: ChildProcessWithoutNullStreams): Promise<void> {
  c.stdin.write('go\n');
  expect(await nextLine(c)).toBe('done');
}

describe.runIf(process.platform === 'linux')('peak_memory on a real process', () => {
  it("reads a spike between two samples from the kernel's high-water mark, and not one from before the session", async () => {
    child = await spiker();
    const real = processMetricContext(child.pid!);
    let samples = 0;
    const ctx: MetricContext = { ...real, sampleRssBytes: () => (samples++, real.sampleRssBytes()) };
    await spike(child); // before the session: the reset must drop it
    const metric = peakMemoryMetric();
    await metric.start(ctx);
    const [quiet] = await metric.stop(ctx);
    expect(quiet!.value).toBeLessThan(150);

    samples = 0;
    await metric.start(ctx);
    await spike(child);
    await new Promise((r) => setTimeout(r, 120));
    const [spiked] = await metric.stop(ctx);
    expect(samples).toBe(2); // at start and stop only: nothing wakes in the timed region
    expect(spiked!.value).toBeGreaterThanOrEqual(195);
    expect((await ctx.sampleRssBytes()) / MIB).toBeLessThan(150);
  });
});

describe('peak_memory where the kernel peak cannot be reset', () => {
  it('samples RSS instead, and never reads the lifetime high-water mark', async () => {
    let rss = 10 * MIB;
    let hwmReads = 0;
    const ctx: MetricContext = {
      pid: 0,
      sampleRssBytes: async () => rss,
      resetPeakRss: async () => false,
      peakRssBytes: async () => {
        hwmReads++;
        return 999 * MIB;
      },
      cpuTimeUs: async () => 0,
    };
    const metric = peakMemoryMetric();
    await metric.start(ctx);
    rss = 40 * MIB;
    await new Promise((r) => setTimeout(r, 120));
    rss = 20 * MIB;
    const [peak] = await metric.stop(ctx);
    expect(peak!.value).toBe(40);
    expect(hwmReads).toBe(0);
  });
});
