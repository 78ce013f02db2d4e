import { z } from 'zod';
import { drawEcdf } from '../lib/profile-view.js';

/** What a chart pool's worker can draw, by name, each input checked as it arrives from the main thread. */
const EcdfInputSchema = z.object({
  id: z.string(),
  names: z.array(z.string()),
  colors: z.array(z.string()),
  lines: z.array(z.object({ x: z.array(z.number()), y: z.array(z.number()) })),
  log: z.boolean(),
  ticks: z.array(z.number()).or(z.undefined()),
});

export const DRAWINGS: Record<string, (input: unknown) => string> = {
  ecdf: (input) => drawEcdf(EcdfInputSchema.parse(input)),
};
