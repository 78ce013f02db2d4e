import { formatCsv, formatJson, formatTable, openStore, runSandboxedQuery } from '../../store/index.js';
import { terminalSafe } from '../../text/terminal.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';

export const queryCommand: Command = {
  name: 'query',
  summary: 'run read-only SQL over the results database',
  usage: 'pbh query "SQL" [--db PATH] [--format table|csv|json] [--allow-local-files]',
  help: `
Opens the database read-only and runs SQL: SELECT statements only (with WITH, VALUES, FROM ..., DESCRIBE, SHOW,
SUMMARIZE, PIVOT). Tables: runs, profiles, sessions, samples, layers, scores, generation, systems, models; views made for
people: leaderboard, comparisons.

pbh query writes nothing and reaches nothing but the database: COPY, EXPORT, ATTACH, INSTALL/LOAD, SET, PRAGMA and
every other kind of statement are refused; DuckDB runs with external access off, extension installs and loads off
and its settings locked, so read_csv('/etc/passwd') or a URL is refused too. --allow-local-files lets reading
functions (read_csv, read_parquet, read_json, glob) read local files; writing and the network stay off.

Example:
  pbh query "SELECT model, engine, batch_size, throughput_sps, p50_ms FROM leaderboard"

Options:
  --db PATH             database file (default ${DEFAULT_DB})
  --format FMT          table (default), csv or json (CSV text cells a spreadsheet would run as a formula start with ')
  --allow-local-files   let the query read local files (never write them)`,
  options: { db: { type: 'string' }, format: { type: 'string' }, 'allow-local-files': { type: 'boolean' } },
  async run({ values, positionals }) {
    const sql = positionals.join(' ').trim();
    if (!sql) throw new UsageError('pbh query needs SQL, e.g. pbh query "SELECT * FROM leaderboard"');
    const format = (values.format as string | undefined) ?? 'table';
    if (!['table', 'csv', 'json'].includes(format)) throw new UsageError(`--format ${format} is not one of table, csv, json`);
    const store = await openStore((values.db as string | undefined) ?? DEFAULT_DB, {
      readOnly: true,
      sandbox: { readLocalFiles: values['allow-local-files'] === true },
    });
    try {
      const result = await runSandboxedQuery(store, sql);
      let text = format === 'csv' ? formatCsv(result) : format === 'json' ? formatJson(result) : formatTable(result);
      // CSV keeps every byte for a file or a pipe; on a terminal a cell's ESC or OSC bytes would act, so they are shown.
      if (format === 'csv' && process.stdout.isTTY) text = text.split('\r\n').map((line) => terminalSafe(line)).join('\n');
      process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      return EXIT.ok;
    } finally {
      await store.close();
    }
  },
};
