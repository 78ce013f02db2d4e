import { sweepStatus, type CellState, type CellStatus } from '../../cluster/cell-status.js';
import { configChanged, resubmit } from '../../cluster/submit.js';
import { readSweepFile } from '../../cluster/sweep-file.js';
import { formatTable } from '../../store/query.js';
import { EXIT, UsageError } from '../command.js';

const STATES: CellState[] = ['ok', 'running', 'pending', 'failed', 'missing'];

function table(cells: CellStatus[]): string {
  return formatTable(
    {
      columns: ['task', 'cell', 'key', 'state', 'slurm job', 'detail'],
      types: [],
      rows: cells.map((c) => [c.index, c.label, c.key, c.state, c.task ?? '', c.detail]),
    },
    { maxCellWidth: 90 },
  );
}

const counts = (cells: CellStatus[]): string =>
  STATES.map((s) => [s, cells.filter((c) => c.state === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');

export async function sweepStatusCommand(dir: string | undefined, format: string): Promise<number> {
  if (!dir) throw new UsageError('pbh sweep status needs the sweep folder, e.g. pbh sweep status sweeps/digits');
  if (format !== 'table' && format !== 'json') throw new UsageError(`--format must be table or json, not "${format}".`);
  const sweep = await readSweepFile(dir);
  const { cells, slurm } = await sweepStatus(sweep, dir);
  const changed = await configChanged(sweep);
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify({ name: sweep.name, dir, config_changed: changed, cells, slurm: { sources: slurm.sources, notes: slurm.notes } }, null, 2)}\n`);
    return EXIT.ok;
  }
  process.stdout.write(`${table(cells)}\n`);
  const sources = slurm.sources.length > 0 ? slurm.sources.join(' and ') : 'no Slurm command';
  const notes = slurm.notes.length > 0 ? ` (${slurm.notes.join('; ')})` : '';
  process.stdout.write(`sweep ${sweep.name}: ${counts(cells)}; from the shards and ${sources}${notes}\n`);
  if (changed) process.stdout.write(`note: ${sweep.config} changed (or is gone) since the sweep was submitted; resubmitted tasks run it as it is now\n`);
  if (cells.some((c) => c.state === 'failed' || c.state === 'missing')) process.stdout.write(`rerun what is not ok: pbh sweep resubmit ${dir}\n`);
  if (cells.some((c) => c.state === 'ok')) process.stdout.write(`merge what is done: pbh merge ${dir}/shards --db results/pbh.duckdb\n`);
  return EXIT.ok;
}

export async function sweepResubmitCommand(dir: string | undefined): Promise<number> {
  if (!dir) throw new UsageError('pbh sweep resubmit needs the sweep folder, e.g. pbh sweep resubmit sweeps/digits');
  const r = await resubmit(dir);
  if (r.inFlight.length > 0) process.stdout.write(`${r.inFlight.length} cell(s) still pending or running, left alone: ${r.inFlight.map((c) => c.label).join(', ')}\n`);
  if (r.jobId === null) {
    process.stdout.write('nothing to resubmit: every cell is ok, pending or running\n');
    return EXIT.ok;
  }
  process.stdout.write(`resubmitted ${r.tasks.length} cell(s) (${r.tasks.map((c) => c.label).join(', ')}) as job ${r.jobId}\n${r.jobId}\n`);
  return EXIT.ok;
}
