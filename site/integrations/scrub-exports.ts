import { readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { scrubCommand, scrubSql } from '../src/lib/scrub.js';

const sqlString = (text: string): string => `'${text.replace(/'/g, "''")}'`;
const sqlIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The temporary table of every distinct `command` and its scrubbed form (scrubbedSelect reads it). */
export const COMMANDS_TABLE = 'pbh_scrubbed_commands';

/**
 * Commands hold paths relative to the folder pbh ran in (`--db ../../tmp/x.duckdb`), which SQL cannot resolve:
 * each distinct command of `sources` (queries; those without a `command` column are passed over) is scrubbed here, as the pages show it
 * (scrubCommand), into COMMANDS_TABLE.
 */
export async function loadCommandMap(connection: DuckDBConnection, sources: readonly string[]): Promise<void> {
  await connection.run(`CREATE OR REPLACE TEMP TABLE ${COMMANDS_TABLE} (o VARCHAR PRIMARY KEY, s VARCHAR)`);
  const seen = new Set<string>();
  for (const source of sources) {
    const described = await connection.runAndReadAll(`SELECT column_name FROM (DESCRIBE ${source}) WHERE column_name = 'command'`);
    if (described.getRows().length === 0) continue;
    const rows = await connection.runAndReadAll(`SELECT DISTINCT command FROM (${source}) WHERE command IS NOT NULL`);
    for (const [c] of rows.getRows()) seen.add(String(c));
  }
  const all = [...seen];
  for (let i = 0; i < all.length; i += 500) {
    const chunk = all.slice(i, i + 500);
    await connection.run(`INSERT INTO ${COMMANDS_TABLE} VALUES ${chunk.map((c) => `(${sqlString(c)}, ${sqlString(scrubCommand(c))})`).join(', ')}`);
  }
}

/**
 * The select list that publishes `relation` without local paths: every text column (VARCHAR or JSON) through the
 * site's scrub rules (lib/scrub.ts: relative to the repository, the home folder as ~, any other absolute path
 * shortened; a `command` from COMMANDS_TABLE when loadCommandMap ran), JSON columns as VARCHAR where `jsonAsText`,
 * the rest as stored; `dropped` left out.
 */
export async function scrubbedSelect(connection: DuckDBConnection, relation: string, dropped: readonly string[] = [], jsonAsText = true): Promise<string> {
  const described = await connection.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE ${relation})`);
  return described
    .getRows()
    .filter(([name]) => !dropped.includes(String(name)))
    .map(([name, type]) => {
      const id = sqlIdentifier(String(name));
      if (type === 'VARCHAR' && name === 'command') {
        return `coalesce((SELECT s FROM ${COMMANDS_TABLE} WHERE o = ${id}), ${scrubSql(id)}) AS ${id}`;
      }
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
    const files = readdirSync(dir).filter((f) => f.endsWith('.parquet'));
    await loadCommandMap(connection, files.map((f) => `SELECT * FROM read_parquet(${sqlString(path.join(dir, f))})`));
    for (const name of files) {
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
