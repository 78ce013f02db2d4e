import type { DuckDBConnection } from '@duckdb/node-api';
import { BoundarySchema, type Boundary } from '../contracts/profile.js';
import { NumericColumnError, readNumericColumns, type NumericColumns, type NumericKind } from './numeric-columns.js';
import type { SampleColumns } from './site-data.js';

/**
 * A table's rows of every Profile as typed columns, ordered by profile_id then `order`, with where each Profile's run
 * of rows starts and ends. One sorted scan of the table: per-Profile list() aggregates sorted each list on its own and
 * came back as millions of JS values.
 */
interface ProfileRows<S extends Record<string, NumericKind>> {
  spans: Map<string, { start: number; end: number }>;
  columns: NumericColumns<S>;
}

/** Why a row cannot be published, naming the Profile and the row's place in it: what the caller puts in its error. */
export class ProfileRowError extends Error {
  constructor(
    readonly table: string,
    readonly profileId: string,
    readonly index: number,
    problem: string,
  ) {
    super(`${table} row ${index} (by ${table === 'samples' ? 'seq' : 'session_index'}) of Profile ${profileId}: ${problem}`);
    this.name = 'ProfileRowError';
  }
}

function owner(spans: Map<string, { start: number; end: number }>, row: number): { profileId: string; index: number } {
  for (const [profileId, span] of spans) if (row >= span.start && row < span.end) return { profileId, index: row - span.start };
  return { profileId: '(unknown)', index: row };
}

async function readProfileRows<const S extends Record<string, NumericKind>>(
  connection: DuckDBConnection,
  table: 'samples' | 'sessions',
  order: string,
  select: string,
  schema: S,
): Promise<ProfileRows<S>> {
  // Both queries order profile_id by DuckDB's own collation, so the counts line up with the sorted rows.
  const counts = (await connection.runAndReadAll(`SELECT profile_id, count(*)::INTEGER FROM ${table} GROUP BY profile_id ORDER BY profile_id`)).getRows();
  const spans = new Map<string, { start: number; end: number }>();
  let rowCount = 0;
  for (const [profileId, count] of counts) {
    spans.set(String(profileId), { start: rowCount, end: rowCount + Number(count) });
    rowCount += Number(count);
  }
  try {
    const columns = await readNumericColumns(connection, `SELECT ${select} FROM ${table} ORDER BY profile_id, ${order}`, schema, rowCount);
    return { spans, columns };
  } catch (error) {
    if (!(error instanceof NumericColumnError)) throw error;
    const at = owner(spans, error.row);
    throw new ProfileRowError(table, at.profileId, at.index, `${error.column} is ${error.problem}`);
  }
}

const BOUNDARIES = BoundarySchema.options;
/** Each boundary as its index in BOUNDARIES, -1 for a name the contract does not know. */
const BOUNDARY_CODE = `coalesce(CASE boundary ${BOUNDARIES.map((b, i) => `WHEN '${b}' THEN ${i}`).join(' ')} END, -1)::INTEGER AS boundary`;

/** Every Profile's raw samples in seq order, column by column, each value checked as SampleColumnsSchema would. */
export async function readSampleColumns(connection: DuckDBConnection): Promise<Map<string, SampleColumns>> {
  const { spans, columns } = await readProfileRows(connection, 'samples', 'seq', `session, batch, ${BOUNDARY_CODE}, ns`, {
    session: 'int32',
    batch: 'int32',
    boundary: 'int32',
    ns: 'finite',
  });
  const samples = new Map<string, SampleColumns>();
  for (const [profileId, { start, end }] of spans) {
    const codes = columns.boundary.subarray(start, end);
    const unknown = codes.findIndex((code) => code < 0);
    if (unknown >= 0) {
      const name = (await connection.runAndReadAll('SELECT boundary FROM samples WHERE profile_id = $1 ORDER BY seq LIMIT 1 OFFSET $2', [profileId, unknown])).getRows();
      throw new ProfileRowError('samples', profileId, unknown, `boundary ${JSON.stringify(name[0]?.[0])} is not one of ${BOUNDARIES.join(', ')}`);
    }
    const boundary = new Array<Boundary>(codes.length);
    for (let i = 0; i < codes.length; i++) boundary[i] = BOUNDARIES[codes[i]!]!;
    samples.set(profileId, {
      session: columns.session.subarray(start, end),
      batch: columns.batch.subarray(start, end),
      boundary,
      ns: columns.ns.subarray(start, end),
    });
  }
  return samples;
}

/** Every Profile's sessions' throughputs (samples/s), in session order. */
export async function readSessionThroughputs(connection: DuckDBConnection): Promise<Map<string, number[]>> {
  const { spans, columns } = await readProfileRows(connection, 'sessions', 'session_index', 'throughput_sps', { throughput_sps: 'finite' });
  return new Map([...spans].map(([profileId, { start, end }]) => [profileId, Array.from(columns.throughput_sps.subarray(start, end))]));
}
