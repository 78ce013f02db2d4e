import type { Metric } from '../contracts/metric.js';
import { cpuTimeMetric } from './cpu-time.js';
import { peakMemoryMetric } from './peak-memory.js';

/** Metric state lives between start() and stop() of one session; cells run one at a time, so one instance each suffices. */
export const builtinMetrics: Metric[] = [cpuTimeMetric(), peakMemoryMetric()];
export { rssBytes, cpuTimeUs } from './process-stats.js';
