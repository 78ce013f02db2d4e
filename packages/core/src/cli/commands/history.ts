import { z } from 'zod';
import { historyReport, REPORT_FORMATS, safeLine } from '../../compare/index.js';
import { historyChanges, readHistoryPoints } from '../../history/index.js';
import { openStore } from '../../store/index.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';

const OptionsSchema = z.object({
  format: z.enum(REPORT_FORMATS).default('table'),
  db: z.string().default(DEFAULT_DB),
  limit: z.coerce.number().int().positive().optional(),
});

export const historyCommand: Command = {
  name: 'history',
  summary: 'change points over every series of the database (steps in throughput, status changes), latest first',
  usage: 'pbh history [--db PATH] [--limit N] [--format table|markdown|csv|json]',
  help: `
A series is one cell key on one machine (hardware), every status, oldest first. Steps in the ok Profiles' mean
throughput are placed by ruptures' PELT (python/changepoints, run from the project venv; a penalty of 6 sigma^2 ln n
per change, sigma the point-to-point noise from the median absolute difference of neighbours, at least two points a
level). Each step is the level after over the level before: the ratio of their mean throughputs with a 95% interval
and Welch's p from the points' means. Every ok -> failed, timeout, invalid output or skipped transition (and back)
is a change too. Each change names the Profile and run where it happened, the git commit (before -> after where it
changed) and the engine version.

Options:
  --db PATH    database file (default ${DEFAULT_DB})
  --limit N    print the N latest changes only
  --format F   table (default), markdown, csv or json`,
  options: { db: { type: 'string' }, format: { type: 'string' }, limit: { type: 'string' } },
  async run({ values, positionals }) {
    if (positionals.length > 0) throw new UsageError(`pbh history takes no arguments (got ${positionals.join(' ')}).\nUsage: ${historyCommand.usage}`);
    const parsed = OptionsSchema.safeParse(values);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UsageError(`--${issue.path.join('.')} ${String(values[String(issue.path[0])])}: ${issue.message}`);
    }
    const store = await openStore(parsed.data.db, { readOnly: true });
    let points;
    try {
      points = await readHistoryPoints(store);
    } finally {
      await store.close();
    }
    const { method, series, rows } = await historyChanges(points);
    const shown = parsed.data.limit ? rows.slice(0, parsed.data.limit) : rows;
    const text = historyReport(shown, parsed.data.format);
    process.stdout.write(`${parsed.data.format === 'table' ? safeLine(text) : text}\n`);
    if (parsed.data.format === 'table' || parsed.data.format === 'markdown') {
      const steps = rows.filter((r) => r.kind === 'throughput').length;
      process.stderr.write(`${series} series, ${points.length} Profiles: ${steps} throughput steps, ${rows.length - steps} status changes (${method}).\n`);
    }
    return EXIT.ok;
  },
};
