import type { Metric, MetricContext } from '../contracts/metric.js';

const SAMPLE_EVERY_MS = 50;

/**
 * Peak RSS of the process that runs the model during the session. Where Linux lets the harness reset the process's
 * high-water mark (VmHWM) at the session's start, the kernel's own peak is read at its end: exact, and nothing wakes
 * during the timed region. Elsewhere RSS is sampled every 50 ms (and at start and stop), which can miss a short spike.
 */
export function peakMemoryMetric(): Metric {
  let peak = 0;
  let kernelPeak = false;
  let timer: NodeJS.Timeout | undefined;
  let pending: Promise<void> = Promise.resolve();
  const sample = (ctx: MetricContext): Promise<void> =>
    ctx.sampleRssBytes().then(
      (v) => {
        peak = Math.max(peak, v);
      },
      () => undefined,
    );
  return {
    name: 'peak_memory',
    description:
      "peak resident set size of the process that runs the model: the kernel's high-water mark (VmHWM), reset at the session's start, where Linux allows; else sampled every 50 ms",
    async start(ctx) {
      peak = 0;
      kernelPeak = await ctx.resetPeakRss();
      await sample(ctx);
      if (kernelPeak) return;
      timer = setInterval(() => {
        pending = sample(ctx);
      }, SAMPLE_EVERY_MS);
      timer.unref();
    },
    async stop(ctx) {
      clearInterval(timer);
      await pending;
      await sample(ctx);
      if (kernelPeak) {
        const hwm = await ctx.peakRssBytes();
        if (Number.isFinite(hwm)) peak = Math.max(peak, hwm);
      }
      return [{ name: 'peak_rss_mb', value: peak / 2 ** 20, unit: 'MiB', aggregate: 'max' }];
    },
  };
}
