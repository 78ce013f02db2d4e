import type { Metric, MetricContext } from '../contracts/metric.js';

/** CPU time (user + system) the model's process spent during the session, and its average core utilisation. */
export function cpuTimeMetric(): Metric {
  let startCpu = 0;
  let startWall = 0n;
  return {
    name: 'cpu_time',
    description: 'CPU time (user+system) of the process that runs the model (Profile.engine.process says which), per timed session',
    async start(ctx: MetricContext) {
      startCpu = await ctx.cpuTimeUs();
      startWall = process.hrtime.bigint();
    },
    async stop(ctx: MetricContext) {
      const cpuUs = (await ctx.cpuTimeUs()) - startCpu;
      const wallUs = Number(process.hrtime.bigint() - startWall) / 1e3;
      return [
        { name: 'cpu_time_ms', value: cpuUs / 1e3, unit: 'ms', aggregate: 'mean' },
        { name: 'cpu_utilisation', value: wallUs > 0 ? cpuUs / wallUs : NaN, unit: 'cores', aggregate: 'mean' },
      ];
    },
  };
}
