import { rmSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { EXPORTED_RELATIONS } from '@pbh/core';
import { loadCommandMap, scrubbedSelect } from './scrub-exports.js';

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function sqlIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Columns the console's copy leaves out: `profile_json` repeats what the other columns and tables hold (about 11 KB a
 * Profile, half the file at 10,000 Profiles). It stays in `data/parquet/profiles.parquet` and, as the whole Profile,
 * in `data/profiles/<id>.json`.
 */
const DROPPED_COLUMNS: Partial<Record<(typeof EXPORTED_RELATIONS)[number], string[]>> = { profiles: ['profile_json'] };

/**
 * `samples` as a view over two tables: each row keyed by a small integer, which run-length encodes, instead of its
 * Profile's 36-character id, which cost a dictionary index a row (18.6 instead of 22.6 MB at 10,000 Profiles, the
 * largest part of this file). Queries read `samples` as they would the store's table, same columns, same order.
 */
async function writeSamples(connection: DuckDBConnection): Promise<void> {
  await connection.run(
    'CREATE TABLE pub.sample_profiles AS SELECT (row_number() OVER (ORDER BY profile_id))::INTEGER AS profile_key, profile_id FROM (SELECT DISTINCT profile_id FROM src.samples)',
  );
  await connection.run(
    'CREATE TABLE pub.sample_rows AS SELECT k.profile_key, s.* EXCLUDE (profile_id) FROM src.samples s JOIN pub.sample_profiles k USING (profile_id) ORDER BY k.profile_key, s.seq',
  );
  // Created from inside the file's own catalog, so the view's tables are named without it: the console attaches the file under another name.
  await connection.run('USE pub');
  await connection.run('CREATE VIEW samples AS SELECT k.profile_id, r.* EXCLUDE (profile_key) FROM sample_rows r JOIN sample_profiles k USING (profile_key)');
  await connection.run('USE memory');
}

/**
 * Writes the DuckDB file the in-browser SQL console attaches. duckdb-wasm 1.32 (DuckDB 1.4) has no
 * Parquet reader or JSON extension built in and would fetch them from DuckDB's extension CDN, which a
 * self-contained site must not do; its core does read DuckDB files, lazily over HTTP range requests.
 * So every relation of the store is copied here: views (leaderboard, comparisons) as tables, samples as a view (writeSamples), JSON
 * columns as VARCHAR, text without local paths, in a storage format DuckDB 1.0+ reads, except `profiles.profile_json` (DROPPED_COLUMNS).
 * The source is attached READ_ONLY from a
 * separate in-memory instance: the results file itself is never opened for writing. The caller holds the
 * store open read-only meanwhile, so no writer can take the file's lock first.
 */
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
    await loadCommandMap(connection, ['SELECT * FROM src.profiles', 'SELECT * FROM src.runs', 'SELECT * FROM src.leaderboard']);
    for (const relation of EXPORTED_RELATIONS) {
      if (relation === 'samples') {
        await writeSamples(connection);
        continue;
      }
      // Text columns without local paths (scrub-exports.ts), JSON ones as VARCHAR.
      const select = await scrubbedSelect(connection, `src.${sqlIdentifier(relation)}`, DROPPED_COLUMNS[relation] ?? []);
      await connection.run(`CREATE TABLE pub.${sqlIdentifier(relation)} AS SELECT ${select} FROM src.${sqlIdentifier(relation)}`);
    }
    await connection.run('DETACH pub');
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
