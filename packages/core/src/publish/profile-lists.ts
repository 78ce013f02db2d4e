import type { DuckDBConnection } from '@duckdb/node-api';
import { BoundarySchema, type Boundary } from '../contracts/profile.js';
import { readNumericColumns, type NumericColumns, type NumericKind } from './numeric-columns.js';
import type { SampleColumns } from './site-data.js';

/** A table's rows of every Profile as typed columns, ordered by profile_id then `order`, with where each Profile's rows lie. */
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

/**
 * The order of the rows read (`key`: each row's Profile as its index in profile_id order; `order`: its order column):
 * rowAt[i] is the read row that goes to place i, Profile by Profile, each in `order` order (ties as read).
 */
function placeRows(key: Int32Array, order: Int32Array, starts: Int32Array): Int32Array {
  const next = starts.slice(0, starts.length - 1);
  const rowAt = new Int32Array(key.length);
  for (let row = 0; row < key.length; row++) rowAt[next[key[row]!]!++] = row;
  for (let k = 0; k < next.length; k++) {
    const span = rowAt.subarray(starts[k]!, starts[k + 1]!);
    let sorted = true;
    for (let i = 1; i < span.length && sorted; i++) sorted = order[span[i - 1]!]! <= order[span[i]!]!;
    // Rows come back in the table's order, which is nearly always the order they were written in; only others sort.
    if (!sorted) span.sort((a, b) => order[a]! - order[b]! || a - b);
  }
  return rowAt;
}

/** `from`'s values in rowAt's order. Generic only in its type: each call site stays monomorphic (a loop over either array kind ran 10x slower). */
function gather<A extends Int32Array | Float64Array>(from: A, to: A, rowAt: Int32Array): A {
  for (let i = 0; i < rowAt.length; i++) to[i] = from[rowAt[i]!]!;
  return to;
}

/**
 * One scan of the table, unsorted, each row tagged with its Profile's index in profile_id order, then placed in JS:
 * sorting 3 million rows by (profile_id, seq) in DuckDB cost twice the scan, and per-Profile list() aggregates
 * sorted each list on its own and came back as millions of JS values.
 */
async function readProfileRows<const S extends Record<string, NumericKind>>(
  connection: DuckDBConnection,
  table: 'samples' | 'sessions',
  order: string,
  select: string,
  schema: S,
): Promise<ProfileRows<S>> {
  // Both queries number profile_id by DuckDB's own collation, so each row's key is its Profile's index in `counts`.
  const counts = (await connection.runAndReadAll(`SELECT profile_id, count(*)::INTEGER FROM ${table} GROUP BY profile_id ORDER BY profile_id`)).getRows();
  const ids = counts.map(([profileId]) => String(profileId));
  const starts = new Int32Array(counts.length + 1);
  counts.forEach(([, count], k) => (starts[k + 1] = starts[k]! + Number(count)));
  const rowCount = starts[counts.length]!;
  const keys = `(SELECT profile_id, (row_number() OVER (ORDER BY profile_id) - 1)::INTEGER AS profile_key FROM (SELECT DISTINCT profile_id FROM ${table}))`;
  const { columns: read, issue } = await readNumericColumns(
    connection,
    `SELECT profile_key, ${order} AS row_order, ${select} FROM ${table} JOIN ${keys} USING (profile_id)`,
    { profile_key: 'int32', row_order: 'int32', ...schema },
    rowCount,
  );
  for (const key of read.profile_key) if (key < 0 || key >= ids.length) throw new Error(`${table}: a row's Profile is not among those counted`);
  const rowAt = placeRows(read.profile_key, read.row_order, starts);
  if (issue) {
    const key = read.profile_key[issue.row]!;
    throw new ProfileRowError(table, ids[key]!, rowAt.indexOf(issue.row) - starts[key]!, `${issue.column} is ${issue.problem}`);
  }
  let inPlace = true;
  for (let i = 0; i < rowCount && inPlace; i++) inPlace = rowAt[i] === i;
  const columns = Object.fromEntries(
    Object.keys(schema).map((name) => {
      const from: Int32Array<ArrayBuffer> | Float64Array<ArrayBuffer> = read[name as keyof typeof read];
      if (inPlace) return [name, from];
      return [name, from instanceof Int32Array ? gather(from, new Int32Array(rowCount), rowAt) : gather(from, new Float64Array(rowCount), rowAt)];
    }),
  ) as NumericColumns<S>;
  return { spans: new Map(ids.map((id, k) => [id, { start: starts[k]!, end: starts[k + 1]! }])), columns };
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
