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
