import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/**
 * A sweep folder on the cluster's shared filesystem:
 *   DIR/sweep.json            what was submitted (this schema)
 *   DIR/shards/<key>.duckdb   one database per cell, written by that cell's array task only
 *   DIR/logs/<job>_<task>.log each task's stdout and stderr
 *   DIR/submit-<n>.sbatch     the script of each submission, as sbatch received it
 */
export const SWEEP_FILE = 'sweep.json';

export const SlurmOptionsSchema = z.object({
  partition: z.string().min(1).nullable(),
  time: z.string().min(1).nullable(),
  cpus_per_task: z.number().int().positive().nullable(),
  exclusive: z.boolean(),
  max_parallel: z.number().int().positive().nullable(),
});
export type SlurmOptions = z.infer<typeof SlurmOptionsSchema>;

export const SweepFileSchema = z.object({
  version: z.literal(1),
  name: z.string(),
  /** Absolute path of the experiment config every task runs. */
  config: z.string(),
  /** sha256 of the config file at submission: a changed file may no longer hold these cells. */
  config_sha256: z.string(),
  /** Where sbatch was run; each task runs there too, so reproduce commands read as they would locally. */
  cwd: z.string(),
  created_at: z.string(),
  /** Absolute paths every node must have: the node binary and pbh's CLI (the repo on the shared filesystem). */
  node: z.string(),
  pbh: z.string(),
  slurm: SlurmOptionsSchema,
  /** Array task i runs cells[i]. */
  cells: z.array(z.object({ key: z.string().regex(/^[0-9a-f]{16}$/), label: z.string() })).min(1),
  submissions: z.array(z.object({ job_id: z.string().regex(/^\d+$/), tasks: z.array(z.number().int().nonnegative()), submitted_at: z.string() })),
});
export type SweepFile = z.infer<typeof SweepFileSchema>;

export const shardsDir = (dir: string): string => path.join(dir, 'shards');
export const logsDir = (dir: string): string => path.join(dir, 'logs');
export const shardPath = (dir: string, key: string): string => path.join(shardsDir(dir), `${key}.duckdb`);

export class SweepFileError extends Error {
  override name = 'SweepFileError';
}

export async function readSweepFile(dir: string): Promise<SweepFile> {
  const file = path.join(dir, SWEEP_FILE);
  if (!existsSync(file)) {
    throw new SweepFileError(`${dir} is not a sweep folder (no ${SWEEP_FILE} in it): pass the folder pbh sweep CONFIG --slurm printed.`);
  }
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new SweepFileError(`${file} is not valid JSON (${(error as Error).message}); it is written by pbh sweep, restore it from the sweep's submit-*.sbatch scripts or submit again.`);
  }
  const parsed = SweepFileSchema.safeParse(json);
  if (!parsed.success) throw new SweepFileError(`${file} is not a sweep file this pbh reads: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Written to a temporary name and renamed, so a reader on another node never sees half a file. */
export async function writeSweepFile(dir: string, sweep: SweepFile): Promise<void> {
  const file = path.join(dir, SWEEP_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(SweepFileSchema.parse(sweep), null, 2)}\n`);
  await rename(tmp, file);
}
