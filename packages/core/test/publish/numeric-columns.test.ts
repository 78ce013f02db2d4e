import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNumericColumns } from '../../src/publish/numeric-columns.js';

let instance: DuckDBInstance;
let connection: DuckDBConnection;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
});
afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

const schema = { i: 'int32', x: 'finite' } as const;

describe('readNumericColumns', () => {
  it('copies every row of several chunks into typed arrays, values exact', async () => {
    // 5,000 rows: three of DuckDB's 2,048-row chunks.
    const { columns, issue } = await readNumericColumns(
      connection,
      'SELECT (g * 7 - 3)::INTEGER AS i, g / 3 AS x FROM range(5000) t(g) ORDER BY g',
      schema,
      5000,
    );
    expect(issue).toBeNull();
    expect(columns.i).toBeInstanceOf(Int32Array);
    expect(columns.x).toBeInstanceOf(Float64Array);
    expect(Array.from(columns.i)).toEqual(Array.from({ length: 5000 }, (_, g) => g * 7 - 3));
    expect(Array.from(columns.x)).toEqual(Array.from({ length: 5000 }, (_, g) => g / 3));
  });

  it('reports the first NULL or non-finite value with its column and row', async () => {
    const nullAt = await readNumericColumns(
      connection,
      'SELECT CASE WHEN g = 2100 THEN NULL ELSE g END::INTEGER AS i, 1.5::DOUBLE AS x FROM range(3000) t(g) ORDER BY g',
      schema,
      3000,
    );
    expect(nullAt.issue).toEqual({ column: 'i', row: 2100, problem: 'NULL, where a number is required' });
    const nanAt = await readNumericColumns(
      connection,
      "SELECT g::INTEGER AS i, CASE WHEN g = 9 THEN 'NaN'::DOUBLE WHEN g = 11 THEN 'inf'::DOUBLE ELSE g END AS x FROM range(20) t(g) ORDER BY g",
      schema,
      20,
    );
    expect(nanAt.issue).toEqual({ column: 'x', row: 9, problem: 'NaN, where a finite number is required' });
  });

  it('refuses columns of another name or type, and a row count other than the one expected', async () => {
    await expect(readNumericColumns(connection, 'SELECT 1::BIGINT AS i, 1.0::DOUBLE AS x', schema, 1)).rejects.toThrow(
      'the query gave columns i BIGINT, x DOUBLE; i INTEGER, x DOUBLE expected',
    );
    await expect(readNumericColumns(connection, 'SELECT 1::INTEGER AS x, 1.0::DOUBLE AS i', schema, 1)).rejects.toThrow(/i INTEGER, x DOUBLE expected/);
    await expect(readNumericColumns(connection, 'SELECT g::INTEGER AS i, 1.0::DOUBLE AS x FROM range(3) t(g)', schema, 2)).rejects.toThrow(
      'the query gave more than the 2 rows expected',
    );
    await expect(readNumericColumns(connection, 'SELECT g::INTEGER AS i, 1.0::DOUBLE AS x FROM range(3) t(g)', schema, 4)).rejects.toThrow(
      'the query gave 3 rows, 4 expected',
    );
  });
});
