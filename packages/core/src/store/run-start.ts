import { z } from 'zod';
import { SystemInfoSchema } from '../contracts/profile.js';

/** What the store records when a sweep starts; harness_version and git_sha are read from `system`. */
export const RunStartSchema = z.object({
  run_id: z.string().min(1),
  name: z.string(),
  /** ISO 8601 timestamp. */
  started_at: z.string(),
  /** The experiment config as loaded (after defaults). */
  config: z.record(z.string(), z.unknown()),
  command: z.string(),
  system: SystemInfoSchema,
});
export type RunStart = z.infer<typeof RunStartSchema>;

/** How a run ended: it finished its cells, a signal stopped it after the cells in flight were recorded, or its process
 * was killed and a later run on the same file closed it. */
export const RunEndSchema = z.enum(['finished', 'interrupted', 'killed']);
export type RunEnd = z.infer<typeof RunEndSchema>;
