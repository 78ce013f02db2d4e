import { z } from 'zod';
import { compareReport, compareSides, CompareSpecError, PointSource, REPORT_FORMATS, resolveSide, safeLine } from '../../compare/index.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';

const OptionsSchema = z.object({
  threshold: z.coerce.number().refine((x) => Number.isFinite(x) && x >= 1, { message: 'must be a factor of 1 or more, e.g. 1.1 for 10%' }).default(1.1),
  format: z.enum(REPORT_FORMATS).default('table'),
  'fail-on': z.enum(['regression', 'never']).default('never'),
  db: z.string().default(DEFAULT_DB),
});

export const compareCommand: Command = {
  name: 'compare',
  summary: 'compare two runs, two commits or two databases cell by cell: faster, slower or no change',
  usage: 'pbh compare BASELINE CANDIDATE [--db PATH] [--threshold 1.1] [--fail-on regression] [--format table|markdown|csv|json]',
  help: `
BASELINE and CANDIDATE are each one of:
  a database file            each cell's newest ok Profile in that file
  RUN_ID, or run:RUN_ID      a run of --db (a unique prefix of its id will do)
  SHA, or commit:SHA         every run of --db recorded at that git commit (a prefix will do)

Cells are matched by cell key. Per cell: the ranked figure (the leaderboard's throughput, mean across sessions) of
each side, the ratio candidate / baseline with its 95% confidence interval (delta method on the log ratio over the
per-session throughputs, Welch's degrees of freedom), p, and a verdict:
  slower / faster   the ratio is beyond the threshold and its 95% CI leaves out 1
  no change         otherwise
  not comparable    a side is missing, not ok, on other hardware, or has one session (the why says which)
A noisy Profile (a session under 100 ms, or a 95% CI wider than ±10% of its mean) or one measured on a busy machine
(profile.interference.busy) keeps its verdict with the caveat beside it: "slower (caveat)".

Options:
  --db PATH             database for run and commit ids (default ${DEFAULT_DB})
  --threshold F         a change counts beyond this factor (default 1.1: 10% slower or faster; asv's --factor)
  --fail-on regression  exit 1 when any cell is slower, or ok in the baseline and failed in the candidate
  --format FMT          table (default), markdown (for a pull request), csv or json

Example:
  pbh compare 3f2a91c0 8d1e44b7 --fail-on regression --format markdown`,
  options: { db: { type: 'string' }, threshold: { type: 'string' }, format: { type: 'string' }, 'fail-on': { type: 'string' } },
  async run({ values, positionals }) {
    if (positionals.length !== 2) throw new UsageError(`pbh compare takes a BASELINE and a CANDIDATE (got ${positionals.length} arguments).\nUsage: ${compareCommand.usage}`);
    const parsed = OptionsSchema.safeParse(values);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UsageError(`--${issue.path.join('.')} ${String(values[String(issue.path[0])])}: ${issue.message}`);
    }
    const options = parsed.data;
    const source = new PointSource();
    let sides;
    try {
      sides = [await resolveSide(positionals[0]!, options.db, source), await resolveSide(positionals[1]!, options.db, source)] as const;
    } catch (error) {
      if (error instanceof CompareSpecError) throw new UsageError(error.message, { cause: error });
      throw error;
    }
    const rows = compareSides(sides[0].points, sides[1].points, { threshold: options.threshold });
    const text = compareReport(rows, options.format);
    const counts = (['slower', 'faster', 'no change', 'not comparable'] as const).map((v) => `${rows.filter((r) => r.verdict === v).length} ${v}`).join(', ');
    const regressions = rows.filter((r) => r.regression).length;
    if (options.format === 'table' || options.format === 'markdown') {
      process.stderr.write(safeLine(`baseline:  ${sides[0].description}\ncandidate: ${sides[1].description}\n`));
    }
    process.stdout.write(`${options.format === 'table' ? safeLine(text) : text}\n`);
    if (options.format === 'table' || options.format === 'markdown') {
      process.stderr.write(`${rows.length} cells: ${counts}; threshold ×${options.threshold}. ${regressions} regression${regressions === 1 ? '' : 's'}.\n`);
    }
    return options['fail-on'] === 'regression' && regressions > 0 ? EXIT.partial : EXIT.ok;
  },
};
