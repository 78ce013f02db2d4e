import type { Metric, MetricContext } from '../contracts/metric.js';

const SAMPLE_EVERY_MS = 50;

/**
 * Peak RSS of the process that runs the model, sampled every 50 ms during the session (and at start and stop).
 * Sampling, not the kernel's lifetime high-water mark, because the harness process outlives many cells.
 */
export function peakMemoryMetric(): Metric {
  let peak = 0;
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
    description: 'peak resident set size (sampled every 50 ms) of the process that runs the model',
    async start(ctx) {
      peak = 0;
      await sample(ctx);
      timer = setInterval(() => {
        pending = sample(ctx);
      }, SAMPLE_EVERY_MS);
      timer.unref();
    },
    async stop(ctx) {
      clearInterval(timer);
      await pending;
      await sample(ctx);
      return [{ name: 'peak_rss_mb', value: peak / 2 ** 20, unit: 'MiB', aggregate: 'max' }];
    },
  };
}
