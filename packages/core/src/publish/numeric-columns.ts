import { DuckDBTypeId, type DuckDBConnection } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';

/**
 * `int32`: an INTEGER column; `finite`: a DOUBLE column whose every value is finite (what z.number() accepts).
 * Neither may hold NULL.
 */
export type NumericKind = 'int32' | 'finite';
type ArrayOf<K extends NumericKind> = K extends 'int32' ? Int32Array<ArrayBuffer> : Float64Array<ArrayBuffer>;
export type NumericColumns<S extends Record<string, NumericKind>> = { [N in keyof S]: ArrayOf<S[N]> };

const TYPE_OF: Record<NumericKind, { id: DuckDBTypeId; name: string; bytes: number }> = {
  int32: { id: DuckDBTypeId.INTEGER, name: 'INTEGER', bytes: Int32Array.BYTES_PER_ELEMENT },
  finite: { id: DuckDBTypeId.DOUBLE, name: 'DOUBLE', bytes: Float64Array.BYTES_PER_ELEMENT },
};

/** A value a column may not hold, with where it is: the caller names the record the row belongs to. */
export interface NumericColumnIssue {
  column: string;
  row: number;
  problem: string;
}

/** The first NULL row of a chunk's column, or -1; DuckDB gives no validity mask when every row is valid. */
function firstNull(vector: duckdb.Vector, rows: number): number {
  const mask = duckdb.vector_get_validity(vector, Math.ceil(rows / 64) * 8);
  if (!mask) return -1;
  // Eight rows a byte, bit i of a little-endian word for row i; whole bytes of valid rows are skipped at once.
  for (let byte = 0; byte * 8 < rows; byte++) {
    if (mask[byte] === 0xff && byte * 8 + 8 <= rows) continue;
    for (let row = byte * 8; row < Math.min(rows, byte * 8 + 8); row++) if ((mask[byte]! & (1 << (row & 7))) === 0) return row;
  }
  return -1;
}

/**
 * Runs `sql` and copies its columns, which must be named and typed as `schema` says, into typed arrays of `rowCount`
 * rows. The values are copied from DuckDB's vectors as they are, without building a JS value per cell: at millions of
 * cells that per-value conversion, not the query, was what reading cost. The first NULL or non-finite double comes back
 * as `issue` (the caller knows what the row is); a column of another name or type, or a row count other than
 * `rowCount`, throws.
 */
export async function readNumericColumns<const S extends Record<string, NumericKind>>(
  connection: DuckDBConnection,
  sql: string,
  schema: S,
  rowCount: number,
): Promise<{ columns: NumericColumns<S>; issue: NumericColumnIssue | null }> {
  const names = Object.keys(schema);
  const result = await connection.run(sql);
  const actual = Array.from({ length: result.columnCount }, (_, i) => `${result.columnName(i)} ${result.columnType(i).toString()}`);
  const expected = names.map((name) => `${name} ${TYPE_OF[schema[name]!].name}`);
  if (actual.join(', ') !== expected.join(', ')) throw new Error(`the query gave columns ${actual.join(', ')}; ${expected.join(', ')} expected`);
  const kinds = names.map((name) => schema[name]!);
  const arrays = kinds.map((kind) => (kind === 'int32' ? new Int32Array(rowCount) : new Float64Array(rowCount)));
  let offset = 0;
  let issue: NumericColumnIssue | null = null;
  // The result is materialized: its chunks are read in place, without an asynchronous fetch for each of ~1,600.
  for (let index = 0; index < result.chunkCount; index++) {
    const chunk = result.getChunk(index);
    const rows = chunk.rowCount;
    if (offset + rows > rowCount) throw new Error(`the query gave more than the ${rowCount} rows expected`);
    kinds.forEach((kind, column) => {
      const vector = duckdb.data_chunk_get_vector(chunk.chunk, column);
      const nullRow = issue ? -1 : firstNull(vector, rows);
      if (nullRow >= 0) issue = { column: names[column]!, row: offset + nullRow, problem: 'NULL, where a number is required' };
      const bytes = duckdb.vector_get_data(vector, rows * TYPE_OF[kind].bytes);
      const target = arrays[column]!;
      if (target instanceof Int32Array) target.set(new Int32Array(bytes.buffer, bytes.byteOffset, rows), offset);
      else target.set(new Float64Array(bytes.buffer, bytes.byteOffset, rows), offset);
    });
    offset += rows;
  }
  if (offset !== rowCount) throw new Error(`the query gave ${offset} rows, ${rowCount} expected`);
  kinds.forEach((kind, column) => {
    const values = arrays[column]!;
    if (kind !== 'finite' || issue) return;
    for (let row = 0; row < values.length; row++) {
      if (!Number.isFinite(values[row])) {
        issue = { column: names[column]!, row, problem: `${values[row]}, where a finite number is required` };
        return;
      }
    }
  });
  return { columns: Object.fromEntries(names.map((name, column) => [name, arrays[column]])) as NumericColumns<S>, issue };
}
