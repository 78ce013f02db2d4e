import type { Metric } from '../contracts/metric.js';
import { percentile } from '../stats/summary.js';

/** Session throughput and latency from the per-batch predict timings the loop recorded. */
export const latencyMetric: Metric = {
  name: 'latency',
  description: 'throughput (samples/s over summed predict time) and predict latency p50/p99 per session',
  start() {},
  async stop(ctx) {
    const { predictNs, samples } = ctx.recorded();
    const sorted = Float64Array.from(predictNs).sort();
    const total = sorted.reduce((a, b) => a + b, 0);
    return [
      { name: 'throughput_sps', value: total > 0 ? (samples * 1e9) / total : NaN, unit: 'samples/s' },
      { name: 'latency_p50_ms', value: percentile(sorted, 0.5) / 1e6, unit: 'ms' },
      { name: 'latency_p99_ms', value: percentile(sorted, 0.99) / 1e6, unit: 'ms' },
    ];
  },
};
