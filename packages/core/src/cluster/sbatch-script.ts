import path from 'node:path';
import { logsDir, shardsDir, SWEEP_FILE, SweepFileError, type SweepFile } from './sweep-file.js';

/** Quoted for bash: safe whatever a path holds. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Slurm's --array list: task ids as ranges ("0-3,7"), with "%N" to run at most N at once. */
export function arraySpec(tasks: readonly number[], maxParallel: number | null): string {
  const sorted = [...new Set(tasks)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j += 1;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return `${parts.join(',')}${maxParallel === null ? '' : `%${maxParallel}`}`;
}

/**
 * A path in an #SBATCH line: sbatch splits directives at whitespace unless double-quoted, and has no escape for a
 * double quote or a newline inside one.
 */
function directivePath(flag: string, value: string): string {
  if (/["\n\r]/.test(value)) throw new SweepFileError(`${flag} ${JSON.stringify(value)}: a path with a double quote or a line break cannot be passed to sbatch; move the sweep folder.`);
  return /\s/.test(value) ? `${flag}="${value}"` : `${flag}=${value}`;
}

/** Slurm job names are shown in squeue and used in mails: letters, digits and . _ - only. */
export function jobName(sweepName: string): string {
  return `pbh-${sweepName.replace(/[^\w.-]+/g, '_').slice(0, 60)}`;
}

/**
 * The batch script of one submission: an array job whose task i runs cell i of the sweep with
 * `pbh run CONFIG --only KEY` into its own shard. Every path is absolute, so it runs the same on any node that
 * mounts the sweep folder and the repo (node_modules and .venv included) at the same paths. The keys are written
 * into the script, in sweep.json's order, so a task needs nothing but its SLURM_ARRAY_TASK_ID.
 */
export function renderSbatchScript(sweep: SweepFile, dir: string, tasks: readonly number[]): string {
  const absDir = path.resolve(dir);
  const s = sweep.slurm;
  const directives = [
    `--job-name=${jobName(sweep.name)}`,
    `--array=${arraySpec(tasks, s.max_parallel)}`,
    directivePath('--output', path.join(logsDir(absDir), '%A_%a.log')),
    directivePath('--chdir', sweep.cwd),
    '--nodes=1',
    '--ntasks=1',
    ...(s.partition === null ? [] : [`--partition=${s.partition}`]),
    ...(s.time === null ? [] : [`--time=${s.time}`]),
    ...(s.cpus_per_task === null ? [] : [`--cpus-per-task=${s.cpus_per_task}`]),
    // Two benchmarks on one node disturb each other's timings: by default each cell has its node to itself.
    ...(s.exclusive ? ['--exclusive'] : []),
  ];
  const run = [shellQuote(sweep.node), shellQuote(sweep.pbh), 'run', shellQuote(sweep.config), '--only', '"$key"', '--db', `${shellQuote(shardsDir(absDir))}/"$key".duckdb`];
  return [
    '#!/bin/bash',
    ...directives.map((d) => `#SBATCH ${d}`),
    `# PBH sweep ${sweep.name.replace(/\n/g, ' ')}: array task i runs cell i of ${path.join(absDir, SWEEP_FILE)} into its own shard.`,
    '# Written by pbh sweep; merge the shards with: pbh merge ' + `${shellQuote(shardsDir(absDir))} --db results/pbh.duckdb`,
    'set -euo pipefail',
    `keys=(${sweep.cells.map((c) => c.key).join(' ')})`,
    'key=${keys[$SLURM_ARRAY_TASK_ID]}',
    'echo "pbh sweep: task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID, cell $key, on $(hostname) at $(date -u +%FT%TZ)"',
    `exec ${run.join(' ')}`,
    '',
  ].join('\n');
}
