import path from 'node:path';
import { z } from 'zod';
import { renderSbatchScript } from '../../cluster/sbatch-script.js';
import { planSweep, startSweep } from '../../cluster/submit.js';
import type { SlurmOptions } from '../../cluster/sweep-file.js';
import { loadExperiment } from '../../config/load.js';
import { EXIT, UsageError, type Command } from '../command.js';
import { sweepResubmitCommand, sweepStatusCommand } from './sweep-status.js';

const positiveInt = (flag: string) =>
  z.string().regex(/^\d+$/, `${flag} must be a whole number`).transform(Number).pipe(z.number().int().positive(`${flag} must be at least 1`));

/** What sbatch accepts for --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, or no limit. */
const SLURM_TIME = /^(\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d{1,2}(:\d{1,2}){0,2}|UNLIMITED|INFINITE)$/;

const FlagsSchema = z.object({
  partition: z.string().regex(/^[\w.,-]+$/, '--partition must be a partition name (letters, digits, . _ - and commas)').optional(),
  time: z.string().regex(SLURM_TIME, '--time must be a Slurm time: minutes, MM:SS, HH:MM:SS or D-HH:MM:SS').optional(),
  'cpus-per-task': positiveInt('--cpus-per-task').optional(),
  'max-parallel': positiveInt('--max-parallel').optional(),
});

function slurmOptions(values: Record<string, unknown>): SlurmOptions {
  const parsed = FlagsSchema.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('; '));
  if (values.exclusive === true && values['no-exclusive'] === true) throw new UsageError('--exclusive and --no-exclusive contradict each other: pass one.');
  const f = parsed.data;
  return {
    partition: f.partition ?? null,
    time: f.time ?? null,
    cpus_per_task: f['cpus-per-task'] ?? null,
    exclusive: values['no-exclusive'] !== true,
    max_parallel: f['max-parallel'] ?? null,
  };
}

export const sweepCommand: Command = {
  name: 'sweep',
  summary: 'run a sweep on a Slurm cluster (one array task per cell), see its state, rerun what is not ok',
  usage: 'pbh sweep CONFIG --slurm [--dir DIR] [--partition P] [--time T] [--cpus-per-task N] [--no-exclusive] [--max-parallel N] [--dry-run]\n       pbh sweep status DIR [--format table|json]\n       pbh sweep resubmit DIR',
  help: `
pbh sweep CONFIG --slurm submits one Slurm array job: task i runs cell i of CONFIG with
  pbh run CONFIG --only KEY --db DIR/shards/KEY.duckdb
on a node of its own (--exclusive, the default: two benchmarks on one node disturb each other), and prints the job
id. DIR (default sweeps/<experiment name>) must be on a filesystem every node mounts, as must this repo (node,
node_modules and .venv are called by absolute path). DIR holds sweep.json (the config, cell keys and job ids),
shards/, logs/ (one log per task) and each submission's script. Merge the shards with pbh merge DIR/shards.

pbh sweep status DIR shows each cell as pending, running, ok, failed or missing, from the shards (an ok Profile
wins) and from squeue and sacct (sacct only where the cluster keeps accounting).
pbh sweep resubmit DIR submits, as one new array job, every cell without an ok Profile that is not pending or running.

Options:
  --slurm             submit to Slurm with sbatch (the only scheduler today)
  --dir DIR           the sweep folder (default sweeps/<experiment name>); must not hold a sweep yet
  --partition P       sbatch --partition
  --time T            sbatch --time per task (e.g. 30, 1:00:00, 1-00:00:00)
  --cpus-per-task N   sbatch --cpus-per-task
  --exclusive         a whole node per task (the default)
  --no-exclusive      let tasks share nodes (timings of neighbours disturb each other)
  --max-parallel N    at most N tasks at once (--array=...%N)
  --dry-run           print the sbatch script and submit nothing
  --format F          status: table (default) or json

Exit code 0 when submitted (the job id is the last line printed) or the status is shown, whatever the cells' states;
1 when sbatch fails (the sweep folder is kept for resubmit); 2 for bad flags, a bad config or a folder that is not a
sweep, or one that already holds a sweep.`,
  options: {
    slurm: { type: 'boolean' },
    dir: { type: 'string' },
    partition: { type: 'string' },
    time: { type: 'string' },
    'cpus-per-task': { type: 'string' },
    exclusive: { type: 'boolean' },
    'no-exclusive': { type: 'boolean' },
    'max-parallel': { type: 'string' },
    'dry-run': { type: 'boolean' },
    format: { type: 'string' },
  },
  async run({ values, positionals }) {
    const [first, second, ...extra] = positionals;
    if (first === 'status' || first === 'resubmit') {
      if (extra.length > 0) throw new UsageError(`pbh sweep ${first} takes one sweep folder, not ${positionals.length - 1}.`);
      return first === 'status' ? sweepStatusCommand(second, (values.format as string | undefined) ?? 'table') : sweepResubmitCommand(second);
    }
    if (!first) throw new UsageError('pbh sweep needs a config file (pbh sweep CONFIG --slurm) or status DIR / resubmit DIR.');
    if (second !== undefined) throw new UsageError(`pbh sweep takes one config file; got ${positionals.join(' ')}.`);
    if (values.slurm !== true) {
      throw new UsageError('pbh sweep CONFIG needs --slurm (the only scheduler PBH submits to); to run on this machine use pbh run CONFIG.');
    }
    const slurm = slurmOptions(values);
    const loaded = await loadExperiment(first);
    const dir = path.resolve((values.dir as string | undefined) ?? path.join('sweeps', loaded.experiment.name.replace(/[^\w.-]+/g, '_')));
    if (values['dry-run'] === true) {
      const sweep = await planSweep(loaded, slurm);
      process.stdout.write(renderSbatchScript(sweep, dir, sweep.cells.map((_, i) => i)));
      return EXIT.ok;
    }
    const { jobId, sweep, script } = await startSweep(loaded, dir, slurm);
    process.stdout.write(
      `submitted ${sweep.cells.length} cell(s) of ${sweep.name} as array job ${jobId} (${script})\n` +
        `  status: pbh sweep status ${dir}\n  merge:  pbh merge ${path.join(dir, 'shards')} --db results/pbh.duckdb\n${jobId}\n`,
    );
    return EXIT.ok;
  },
};
