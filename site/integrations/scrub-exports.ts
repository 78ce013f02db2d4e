import { readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { scrubSql } from '../src/lib/scrub.js';

const sqlString = (text: string): string => `'${text.replace(/'/g, "''")}'`;
const sqlIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The select list that publishes `relation` without local paths: every text column (VARCHAR or JSON) through the
 * site's scrub rules (lib/scrub.ts: relative to the repository, the home folder as ~, any other absolute path
 * shortened), JSON columns as VARCHAR where `jsonAsText`, the rest as stored; `dropped` left out.
 */
export async function scrubbedSelect(connection: DuckDBConnection, relation: string, dropped: readonly string[] = [], jsonAsText = true): Promise<string> {
  const described = await connection.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE ${relation})`);
  return described
    .getRows()
    .filter(([name]) => !dropped.includes(String(name)))
    .map(([name, type]) => {
      const id = sqlIdentifier(String(name));
      if (type === 'VARCHAR') return `${scrubSql(id)} AS ${id}`;
      if (type === 'JSON') return `${scrubSql(`${id}::VARCHAR`)}${jsonAsText ? '' : '::JSON'} AS ${id}`;
      return id;
    })
    .join(', ');
}

/**
 * Rewrites every Parquet file in `dir` (core's exportStore wrote them from the store as recorded) with its text
 * columns scrubbed; each is written beside and renamed over the original, zstd as exportStore writes them.
 */
export async function scrubParquetFiles(dir: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.parquet'))) {
      const file = path.join(dir, name);
      const partial = `${file}.scrub.tmp`;
      const source = `read_parquet(${sqlString(file)})`;
      const select = await scrubbedSelect(connection, `SELECT * FROM ${source}`, [], false);
      rmSync(partial, { force: true });
      await connection.run(`COPY (SELECT ${select} FROM ${source}) TO ${sqlString(partial)} (FORMAT parquet, COMPRESSION zstd)`);
      renameSync(partial, file);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
