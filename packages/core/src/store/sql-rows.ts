import { BOOLEAN, DOUBLE, SQLNULL, VARCHAR, type DuckDBConnection, type DuckDBType } from '@duckdb/node-api';
import type { Cell, Row } from './profile-rows.js';

/**
 * Every JS number binds as DOUBLE: left to itself the driver binds integers above 2^63 (a FLOP count
 * can be one) as BIGINT and fails; DuckDB casts DOUBLE to the INTEGER/BIGINT columns exactly.
 */
function bindType(cell: Cell): DuckDBType {
  if (cell === null) return SQLNULL;
  if (typeof cell === 'number') return DOUBLE;
  if (typeof cell === 'boolean') return BOOLEAN;
  return VARCHAR;
}

/** INSERT one row whose keys are the column names. `ignoreExisting` skips a row whose primary key is stored. */
export async function insertRow(connection: DuckDBConnection, table: string, row: Row, ignoreExisting = false): Promise<void> {
  const columns = Object.keys(row);
  const values = Object.values(row);
  const placeholders = columns.map((_, i) => `$${i + 1}`).join(', ');
  const verb = ignoreExisting ? 'INSERT OR IGNORE INTO' : 'INSERT INTO';
  await connection.run(`${verb} ${table} (${columns.join(', ')}) VALUES (${placeholders})`, values, values.map(bindType));
}
