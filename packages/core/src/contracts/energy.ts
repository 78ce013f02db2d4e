import { z } from 'zod';

/**
 * How an energy figure was obtained: a RAPL counter (powercap sysfs), NVML's cumulative energy counter, NVML power
 * samples integrated over time, or the measured processes' CPU time times a TDP share (an estimate, said so).
 */
export const EnergyMethodSchema = z.enum(['rapl', 'nvml_energy', 'nvml_power', 'estimated_tdp']);
export type EnergyMethod = z.infer<typeof EnergyMethodSchema>;

/** A measured amount is positive or missing: a counter that did not move is NULL with its reason, never 0. */
const joules = z.number().positive().nullable();

/** One energy domain over the Profile's sessions (RAPL per socket, a GPU, or the CPU estimate). */
export const EnergyDomainSchema = z.object({
  /** e.g. package-0, core-0, uncore-0, dram-0, psys-0, gpu-0, cpu (the estimate). */
  name: z.string(),
  kind: z.enum(['package', 'core', 'uncore', 'dram', 'psys', 'gpu', 'cpu']),
  device: z.enum(['cpu', 'gpu']),
  /** Part of the Profile's total: package and dram per socket, each GPU, or the estimate when no counter counts (core and uncore are inside package, psys holds them all). */
  counted: z.boolean(),
  method: EnergyMethodSchema,
  joules_per_sample: joules,
  mean_watts: z.number().positive().nullable(),
  /** Over every session. */
  joules,
  seconds: z.number().nonnegative(),
  /** How often the counter updates: measured where the reader can see it, else the interface's documented period. */
  update_period_s: z.number().positive().nullable(),
  /** Counter updates inside the sessions (the estimate: CPU clock ticks of the measured processes), summed. */
  ticks: z.number().int().nonnegative().nullable(),
  /** Mean watts of this domain while nothing ran (the idle baseline), when one was taken. */
  idle_watts: z.number().nonnegative().nullable(),
  /** Why a figure is NULL, or how it was obtained when that needs saying. */
  reason: z.string().nullable(),
});
export type EnergyDomain = z.infer<typeof EnergyDomainSchema>;

/** The TDP the estimate used and where it came from. */
export const TdpFactsSchema = z.object({
  /** Watts of one CPU package at full load (the vendor's TDP). */
  watts: z.number().positive(),
  /** Logical CPUs of that package the watts are shared among. */
  threads: z.number().int().positive(),
  watts_per_thread: z.number().positive(),
  /** table: the CPU model's row; user: pbh run --tdp-w or energy.tdp_w; default: the table's median W/thread for the vendor, the CPU model not being in it. */
  source: z.enum(['table', 'user', 'default']),
  /** The table row's name, or what the default was taken over. */
  entry: z.string().nullable(),
});
export type TdpFacts = z.infer<typeof TdpFactsSchema>;

export const EnergySchema = z.object({
  /** Joules per sample over the counted domains; NULL with `reason` when nothing could measure or estimate it. */
  joules_per_sample: joules,
  mean_watts: z.number().positive().nullable(),
  /** The least measured method among the counted domains (estimated_tdp < nvml_power < nvml_energy < rapl). */
  method: EnergyMethodSchema.nullable(),
  reason: z.string().nullable(),
  /** A measured domain with fewer counter updates than this in a session is not reported as measured. */
  min_ticks: z.number().int().positive(),
  domains: z.array(EnergyDomainSchema),
  /** Readers that could not run here, each with why (no powercap, no NVML, no GPU, no TDP). */
  unavailable: z.array(z.object({ reader: z.string(), reason: z.string() })),
  /** The counted total per session. */
  sessions: z.array(z.object({ index: z.number().int(), joules, seconds: z.number().nonnegative() })),
  /** Taken before the first session when energy.idle_baseline_s > 0: the counted domains' mean watts at rest. */
  idle_baseline: z.object({ seconds: z.number().positive(), watts: z.number().nonnegative().nullable(), reason: z.string().nullable() }).nullable(),
  tdp: TdpFactsSchema.nullable(),
});
export type Energy = z.infer<typeof EnergySchema>;
