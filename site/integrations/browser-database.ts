import { rmSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { EXPORTED_RELATIONS } from '@pbh/core';

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function sqlIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Writes the DuckDB file the in-browser SQL console attaches. duckdb-wasm 1.32 (DuckDB 1.4) has no
 * Parquet reader or JSON extension built in and would fetch them from DuckDB's extension CDN, which a
 * self-contained site must not do; its core does read DuckDB files, lazily over HTTP range requests.
 * So every relation of the store is copied here: views (leaderboard, comparisons) as tables, JSON
 * columns as VARCHAR, in a storage format DuckDB 1.0+ reads, except `profiles.profile_json` (DROPPED_COLUMNS).
 * The source is attached READ_ONLY from a
 * separate in-memory instance: the results file itself is never opened for writing. The caller holds the
 * store open read-only meanwhile, so no writer can take the file's lock first.
 */
/**
 * Columns the console's copy leaves out: `profile_json` repeats what the other columns and tables hold (about 11 KB a
 * Profile, half the file at 10,000 Profiles). It stays in `data/parquet/profiles.parquet` and, as the whole Profile,
 * in `data/profiles/<id>.json`.
 */
const DROPPED_COLUMNS: Partial<Record<(typeof EXPORTED_RELATIONS)[number], string[]>> = { profiles: ['profile_json'] };

export async function writeBrowserDatabase(sourceDb: string, target: string): Promise<void> {
  rmSync(target, { force: true });
  rmSync(`${target}.wal`, { force: true });
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    try {
      await connection.run(`ATTACH ${sqlString(sourceDb)} AS src (READ_ONLY)`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`Could not read ${sourceDb} for the SQL console's database: ${message}`, { cause: error });
    }
    await connection.run(`ATTACH ${sqlString(target)} AS pub (STORAGE_VERSION 'v1.0.0')`);
    for (const relation of EXPORTED_RELATIONS) {
      const json = await connection.runAndReadAll(
        `SELECT column_name FROM duckdb_columns() WHERE database_name = 'src' AND table_name = $1 AND data_type = 'JSON' ORDER BY column_index`,
        [relation],
      );
      const columns = json.getRows().map((row) => String(row[0]));
      const dropped = DROPPED_COLUMNS[relation] ?? [];
      const kept = columns.filter((c) => !dropped.includes(c));
      const exclude = dropped.length === 0 ? '' : ` EXCLUDE (${dropped.map(sqlIdentifier).join(', ')})`;
      const replace = kept.length === 0 ? '' : ` REPLACE (${kept.map((c) => `${sqlIdentifier(c)}::VARCHAR AS ${sqlIdentifier(c)}`).join(', ')})`;
      await connection.run(`CREATE TABLE pub.${sqlIdentifier(relation)} AS SELECT *${exclude}${replace} FROM src.${sqlIdentifier(relation)}`);
    }
    await connection.run('DETACH pub');
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
