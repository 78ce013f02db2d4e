import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { messageOf } from './errors.js';
import type { ProfileStore } from './store.js';

export type ExportFormat = 'parquet' | 'csv' | 'json';

export interface ExportOptions {
  format: ExportFormat;
  /** Created when missing; existing files of the same names are overwritten. */
  outDir: string;
}

/** Every table and view of the store, one export file each. */
export const EXPORTED_RELATIONS = [
  'schema_version',
  'runs',
  'systems',
  'models',
  'profiles',
  'sessions',
  'samples',
  'layers',
  'scores',
  'leaderboard',
  'comparisons',
] as const;

/** json is one JSON array per file (DuckDB's ARRAY option), readable by JSON.parse and read_json alike. */
const COPY_OPTIONS: Record<ExportFormat, string> = {
  parquet: 'FORMAT parquet',
  csv: 'FORMAT csv, HEADER true',
  json: 'FORMAT json, ARRAY true',
};

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** Writes `<outDir>/<relation>.<format>` for every table and view with COPY ... TO; returns the files written. */
export async function exportStore(store: ProfileStore, options: ExportOptions): Promise<string[]> {
  const outDir = resolve(options.outDir);
  mkdirSync(outDir, { recursive: true });
  const copyOptions = COPY_OPTIONS[options.format];
  return store.withConnection(async (connection) => {
    const files: string[] = [];
    for (const relation of EXPORTED_RELATIONS) {
      const file = join(outDir, `${relation}.${options.format}`);
      try {
        await connection.run(`COPY (SELECT * FROM ${relation}) TO ${sqlString(file)} (${copyOptions})`);
      } catch (error) {
        throw new Error(`Exporting ${relation} of ${store.file} to ${file} failed: ${messageOf(error)}. Check that ${outDir} is writable.`, {
          cause: error,
        });
      }
      files.push(file);
    }
    return files;
  });
}
