import { exportStore, openStore, type ExportFormat } from '../../store/index.js';
import { DEFAULT_DB, EXIT, UsageError, type Command } from '../command.js';
import { checkExportFolder, markExportFolder } from '../export-folder.js';

export const exportCommand: Command = {
  name: 'export',
  summary: 'export every table and view to Parquet, CSV or JSON',
  usage: 'pbh export [--db PATH] --format parquet|csv|json --out DIR',
  help: `
Writes one file per table and view of the database into DIR (created if missing). The database is opened read-only.
DIR must be new, empty, or a folder an earlier pbh export wrote: files it did not write are never overwritten.

Options:
  --db PATH       database file (default ${DEFAULT_DB})
  --format FMT    parquet, csv or json
  --out DIR       output folder`,
  options: { db: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' } },
  async run({ values }) {
    const format = values.format as string | undefined;
    if (format !== 'parquet' && format !== 'csv' && format !== 'json') throw new UsageError('pbh export needs --format parquet, csv or json');
    if (typeof values.out !== 'string') throw new UsageError('pbh export needs --out DIR');
    const outDir = checkExportFolder(values.out);
    const store = await openStore((values.db as string | undefined) ?? DEFAULT_DB, { readOnly: true });
    try {
      const files = await exportStore(store, { format: format as ExportFormat, outDir });
      markExportFolder(outDir, files);
      process.stdout.write(`${files.map((f) => `wrote ${f}`).join('\n')}\n`);
      return EXIT.ok;
    } finally {
      await store.close();
    }
  },
};
