import { formatCsv, formatJson, formatTable, openStore, runQuery } from '../../store/index.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';

export const queryCommand: Command = {
  name: 'query',
  summary: 'run read-only SQL over the results database',
  usage: 'pbh query "SQL" [--db PATH] [--format table|csv|json]',
  help: `
Opens the database read-only and runs one SQL statement. Tables: runs, profiles, sessions, samples, layers, scores,
systems, models; views made for people: leaderboard, comparisons.

Example:
  pbh query "SELECT model, engine, batch_size, throughput_sps, p50_ms FROM leaderboard"

Options:
  --db PATH       database file (default ${DEFAULT_DB})
  --format FMT    table (default), csv or json`,
  options: { db: { type: 'string' }, format: { type: 'string' } },
  async run({ values, positionals }) {
    const sql = positionals.join(' ').trim();
    if (!sql) throw new UsageError('pbh query needs SQL, e.g. pbh query "SELECT * FROM leaderboard"');
    const format = (values.format as string | undefined) ?? 'table';
    if (!['table', 'csv', 'json'].includes(format)) throw new UsageError(`--format ${format} is not one of table, csv, json`);
    const store = await openStore((values.db as string | undefined) ?? DEFAULT_DB, { readOnly: true });
    try {
      const result = await runQuery(store, sql);
      const text = format === 'csv' ? formatCsv(result) : format === 'json' ? formatJson(result) : formatTable(result);
      process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      return EXIT.ok;
    } finally {
      await store.close();
    }
  },
};
