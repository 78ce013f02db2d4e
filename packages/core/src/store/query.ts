import { DuckDBTypeId, type DuckDBConnection, type DuckDBResultReader, type JS } from '@duckdb/node-api';
import { z } from 'zod';
import { neutraliseFormula } from '../text/csv-formula.js';
import { terminalSafe } from '../text/terminal.js';
import { QueryError, messageOf } from './errors.js';
import type { ProfileStore } from './store.js';

/** A query result cell as plain JSON: BIGINT as number when exact (else its decimal string), dates as ISO strings. */
export type QueryCell = null | boolean | number | string | QueryCell[] | { [key: string]: QueryCell };

export interface QueryResult {
  /** Column names, made unique (a repeated name gets a suffix). */
  columns: string[];
  /** DuckDB type of each column, e.g. "VARCHAR", "DOUBLE", "TIMESTAMP WITH TIME ZONE". */
  types: string[];
  rows: QueryCell[][];
}

const STORE_RELATIONS = 'tables runs, systems, models, profiles, sessions, samples, layers, scores, schema_version; views leaderboard, comparisons';

/** What DuckDB's json_serialize_sql answers: the parsed statements, or why it could not serialize them. */
const SerializedSqlSchema = z.union([
  z.object({ error: z.literal(false), statements: z.array(z.unknown()) }),
  z.object({ error: z.literal(true), error_type: z.string(), error_message: z.string() }),
]);

const READING_ONLY =
  'pbh query runs reading statements only: SELECT and its forms (WITH, VALUES, FROM ..., DESCRIBE, SHOW, SUMMARIZE, PIVOT)';

/**
 * Refuses SQL unless every statement in it is a SELECT, using DuckDB's own parser through json_serialize_sql, which
 * serializes SELECT statements only. It parses without binding: binding alone can act (binding EXPORT DATABASE
 * creates its folder), so nothing of a refused statement runs.
 */
async function assertReadingStatements(connection: DuckDBConnection, file: string, sql: string): Promise<void> {
  const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)::VARCHAR', [sql]);
  const parsed = SerializedSqlSchema.parse(JSON.parse(String(reader.getRows()[0]?.[0])));
  if (!parsed.error) {
    if (parsed.statements.length === 0) throw new QueryError(`The SQL holds no statement. ${READING_ONLY}, e.g. pbh query "SELECT * FROM leaderboard".`);
    // DuckDB would run them all and hand back one result: the others' rows would vanish without a word.
    if (parsed.statements.length > 1) {
      throw new QueryError(`The SQL holds ${parsed.statements.length} statements; pbh query prints one result, so it runs one statement at a time on ${file}: run each on its own, or join them (UNION ALL, a WITH clause).`);
    }
    return;
  }
  if (parsed.error_type === 'not implemented' && /^\s*(UN)?PIVOT\b/i.test(sql)) {
    // DuckDB's serializer (PBH's check that SQL only reads) takes a PIVOT whose columns are listed, not one it must discover.
    throw new QueryError(
      `PIVOT without IN (...) cannot be checked as reading-only, so ${file} is not queried: list the values to pivot on, e.g. ` +
        `PIVOT profiles ON engine_name IN ('onnxruntime', 'openvino') USING count(*) GROUP BY model_name, or count with FILTER in a SELECT.`,
    );
  }
  if (parsed.error_type === 'not implemented') {
    throw new QueryError(
      `Refused: ${READING_ONLY}; this SQL has another kind (COPY, EXPORT, INSERT, UPDATE, DELETE, CREATE, ATTACH, INSTALL, LOAD, SET, ` +
        `PRAGMA, CALL, EXPLAIN, ...). ${file} is opened read-only and pbh query writes no file, loads no extension and changes no ` +
        `setting. To save results, redirect --format csv or json (pbh query "SELECT ..." --format csv > out.csv) or use pbh export; ` +
        `for a table's columns, DESCRIBE profiles.`,
    );
  }
  throw new QueryError(`Query failed on ${file}: ${parsed.error_type} error: ${parsed.error_message}.${settingHint(parsed.error_message)} The store has ${STORE_RELATIONS}.`);
}

/**
 * Runs PBH's own SQL against a store opened read-only (the publish step, scripts). A statement that writes to the
 * store fails with DuckDB's read-only error, wrapped in a QueryError that says why. SQL a person typed goes through
 * runSandboxedQuery instead.
 */
export async function runQuery(store: ProfileStore, sql: string): Promise<QueryResult> {
  if (!store.readOnly) {
    throw new QueryError(`runQuery reads only: open ${store.file} with openStore(path, { readOnly: true }) for queries.`);
  }
  return store.withConnection(async (connection) => {
    let reader: DuckDBResultReader;
    try {
      reader = await connection.runAndReadAll(sql);
    } catch (error) {
      const message = messageOf(error);
      if (/read-only/i.test(message)) {
        throw new QueryError(
          `This query tries to change ${store.file}, which queries open read-only (DuckDB: ${message}). ` +
            `Queries can only read (SELECT, DESCRIBE, SUMMARIZE, ...); results are written by pbh run.`,
          { cause: error },
        );
      }
      throw queryFailed(store, error);
    }
    return resultOf(reader);
  });
}

/**
 * Runs SQL a person typed (`pbh query`) against a store opened with OpenStoreOptions.sandbox: only SELECT
 * statements run, and the sandbox's DuckDB settings keep them off the network and off every file but the database
 * (with readLocalFiles, they may read local files).
 */
export async function runSandboxedQuery(store: ProfileStore, sql: string): Promise<QueryResult> {
  if (!store.sandboxed) {
    throw new QueryError(
      `runSandboxedQuery runs only on a sandboxed store: open ${store.file} with openStore(path, { readOnly: true, sandbox: { readLocalFiles: false } }).`,
    );
  }
  return store.withConnection(async (connection) => {
    await assertReadingStatements(connection, store.file, sql);
    let reader: DuckDBResultReader;
    try {
      reader = await connection.runAndReadAll(sql);
    } catch (error) {
      const message = messageOf(error);
      // DuckDB's first line says what it refused; the rest suggests SET and INSTALL commands this sandbox refuses.
      const firstLine = message.split('\n')[0];
      if (/^Permission Error/.test(message)) {
        throw new QueryError(
          `Refused: this query reaches outside ${store.file} (DuckDB: ${firstLine}). pbh query reads the database only; ` +
            `pass --allow-local-files to let it read local files (reading only: writing and the network stay off).`,
          { cause: error },
        );
      }
      if (/^Missing Extension Error/.test(message)) {
        throw new QueryError(
          `Refused: this query needs a DuckDB extension that is not built in (DuckDB: ${firstLine}). pbh query installs and loads ` +
            `no extension (that would download code); parquet, json and icu are built in.`,
          { cause: error },
        );
      }
      throw queryFailed(store, error);
    }
    return resultOf(reader);
  });
}

function queryFailed(store: ProfileStore, error: unknown): QueryError {
  const message = messageOf(error);
  return new QueryError(`Query failed on ${store.file}: ${message}.${settingHint(message)} The store has ${STORE_RELATIONS}.`, { cause: error });
}

/** DuckDB suggests raising max_expression_depth; pbh query locks settings, so the way out is a shallower expression. */
function settingHint(message: string): string {
  return /max_expression_depth/.test(message) ? ' pbh query cannot change settings (SET is refused): make the expression shallower (a WITH clause, IN (...) instead of nested calls or chained ORs).' : '';
}

function resultOf(reader: DuckDBResultReader): QueryResult {
  const dateColumns = new Set(reader.columnTypes().flatMap((type, index) => (type.typeId === DuckDBTypeId.DATE ? [index] : [])));
  return {
    columns: reader.deduplicatedColumnNames(),
    types: reader.columnTypes().map((type) => type.toString()),
    rows: reader.getRowsJS().map((row) => row.map((cell, index) => toQueryCell(cell, dateColumns.has(index)))),
  };
}

function toQueryCell(value: JS, isDate = false): QueryCell {
  if (value === null || typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
  }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return String(value);
    return isDate ? value.toISOString().slice(0, 10) : value.toISOString();
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map((item) => toQueryCell(item));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toQueryCell(item)]));
}

/** How a cell reads in a table or CSV: nested values as JSON, NULL spelled out in tables. */
function cellText(cell: QueryCell, nullText: string): string {
  if (cell === null) return nullText;
  if (typeof cell === 'number') return String(cell);
  if (typeof cell === 'string') return cell;
  if (typeof cell === 'boolean') return cell ? 'true' : 'false';
  return JSON.stringify(cell);
}

/** Numbers shown to a person: integers whole, others to 6 significant digits (CSV and JSON keep every digit). */
function humanNumber(value: number): string {
  if (Number.isInteger(value) || !Number.isFinite(value)) return String(value);
  return String(Number(value.toPrecision(6)));
}

export interface TableFormatOptions {
  /** Longer cells are cut with an ellipsis (default 60). */
  maxCellWidth?: number;
}

/** An aligned text table with a header rule and a row count; numbers right-aligned; control characters shown escaped. */
export function formatTable(result: QueryResult, options: TableFormatOptions = {}): string {
  const maxWidth = Math.max(4, options.maxCellWidth ?? 60);
  const clip = (text: string): string => {
    // Escaped before clipping and measuring: the table's widths are those of what the terminal shows.
    const shown = terminalSafe(text);
    return shown.length > maxWidth ? `${shown.slice(0, maxWidth - 1)}…` : shown;
  };
  const cells = result.rows.map((row) =>
    row.map((cell) => clip(typeof cell === 'number' ? humanNumber(cell) : cellText(cell, 'NULL'))),
  );
  const header = result.columns.map(clip);
  const widths = header.map((name, column) => Math.max(name.length, ...cells.map((row) => row[column]?.length ?? 0)));
  const numeric = result.columns.map((_, column) => result.rows.some((row) => typeof row[column] === 'number'));
  const line = (texts: string[]): string =>
    texts
      .map((text, column) => (numeric[column] ? text.padStart(widths[column] ?? 0) : text.padEnd(widths[column] ?? 0)))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('-+-');
  const count = `(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})`;
  return [line(header), rule, ...cells.map(line), count].join('\n');
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * RFC 4180 CSV with a header row; NULL is an empty field, nested values are JSON. Text a spreadsheet would run as a
 * formula is neutralised (neutraliseFormula); numbers are written as they are.
 */
export function formatCsv(result: QueryResult): string {
  const text = (cell: QueryCell): string => (typeof cell === 'string' ? neutraliseFormula(cell) : cellText(cell, ''));
  const lines = [result.columns.map((name) => csvField(neutraliseFormula(name))).join(',')];
  for (const row of result.rows) lines.push(row.map((cell) => csvField(text(cell))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** A JSON array with one object per row, keyed by column name. */
export function formatJson(result: QueryResult): string {
  const objects = result.rows.map((row) => Object.fromEntries(result.columns.map((name, column) => [name, row[column] ?? null])));
  return JSON.stringify(objects, null, 2);
}
