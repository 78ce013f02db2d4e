import { z } from 'zod';

/** Statistics over a sample of latencies (ns) or throughputs; percentiles by LoadGen's nearest rank (index floor(n x p) of the sorted values, stats/summary.ts). */
export const StatsSchema = z.object({
  n: z.number().int(),
  mean: z.number(),
  std: z.number(),
  variance: z.number(),
  min: z.number(),
  p50: z.number(),
  p90: z.number(),
  p95: z.number(),
  p99: z.number(),
  max: z.number(),
  ci95_low: z.number(),
  ci95_high: z.number(),
});
export type Stats = z.infer<typeof StatsSchema>;
