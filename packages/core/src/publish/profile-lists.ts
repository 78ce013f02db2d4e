import type { DuckDBConnection } from '@duckdb/node-api';
import { BoundarySchema, type Boundary } from '../contracts/profile.js';
import { readNumericColumns, type NumericColumns, type NumericKind } from './numeric-columns.js';
import type { SampleColumns } from './site-data.js';

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

/** `from`'s values at `rows`: a function of its own, as the same loop written inline over a column of either kind ran several times slower. */
function gather<A extends Int32Array<ArrayBuffer> | Float64Array<ArrayBuffer>>(from: A, to: A, rows: Int32Array): A {
  for (let i = 0; i < rows.length; i++) to[i] = from[rows[i]!]!;
  return to;
}

/**
 * Where each Profile's rows are among those read (`key`: each row's Profile as its index in profile_id order; `order`:
 * its order column): one run [start, start + count) when they came back together and in order, which is nearly always
 * (DuckDB returns a table's rows in the order they were written, a Profile's together), else its row numbers, sorted by
 * order (ties as read).
 */
function locateRows(key: Int32Array, order: Int32Array, expected: Int32Array): (number | Int32Array)[] {
  const profiles = expected.length;
  const first = new Int32Array(profiles).fill(-1);
  const last = new Int32Array(profiles);
  const scattered = new Uint8Array(profiles);
  const counts = new Int32Array(profiles);
  for (let row = 0; row < key.length; row++) {
    const k = key[row]!;
    if (first[k] === -1) first[k] = row;
    else if (last[k] !== row - 1 || order[row]! < order[row - 1]!) scattered[k] = 1;
    last[k] = row;
    counts[k]!++;
  }
  for (let k = 0; k < profiles; k++) if (counts[k] !== expected[k]) throw new Error(`Profile ${k} in profile_id order has ${counts[k]} rows read, ${expected[k]} counted`);
  const located: (number | Int32Array)[] = Array.from(first);
  const filled = new Int32Array(profiles);
  for (let k = 0; k < profiles; k++) if (scattered[k]) located[k] = new Int32Array(counts[k]!);
  for (let row = 0; row < key.length; row++) {
    const k = key[row]!;
    if (scattered[k]) (located[k] as Int32Array)[filled[k]!++] = row;
  }
  for (const rows of located) if (typeof rows !== 'number') rows.sort((a, b) => order[a]! - order[b]! || a - b);
  return located;
}

/**
 * Each Profile's rows of a table as typed columns in `order` order, from one unsorted scan, each row tagged with its
 * Profile's index in profile_id order: sorting 3 million rows by (profile_id, seq) in DuckDB cost twice the scan, and
 * per-Profile list() aggregates sorted each list on its own and came back as millions of JS values. A Profile whose rows
 * came back together and in order gets views on the columns read; any other gets its own copy.
 */
async function readProfileRows<const S extends Record<string, NumericKind>>(
  connection: DuckDBConnection,
  table: 'samples' | 'sessions',
  order: string,
  select: string,
  schema: S,
): Promise<Map<string, NumericColumns<S>>> {
  // Both queries number profile_id by DuckDB's own collation, so each row's key is its Profile's index in `counts`.
  const counts = (await connection.runAndReadAll(`SELECT profile_id, count(*)::INTEGER FROM ${table} GROUP BY profile_id ORDER BY profile_id`)).getRows();
  const ids = counts.map(([profileId]) => String(profileId));
  const rowCount = counts.reduce((sum, [, count]) => sum + Number(count), 0);
  const keys = `(SELECT profile_id, (row_number() OVER (ORDER BY profile_id) - 1)::INTEGER AS profile_key FROM (SELECT DISTINCT profile_id FROM ${table}))`;
  const { columns: read, issue } = await readNumericColumns(
    connection,
    `SELECT profile_key, ${order} AS row_order, ${select} FROM ${table} JOIN ${keys} USING (profile_id)`,
    { profile_key: 'int32', row_order: 'int32', ...schema },
    rowCount,
  );
  for (let row = 0; row < rowCount; row++) {
    if (read.profile_key[row]! < 0 || read.profile_key[row]! >= ids.length) throw new Error(`${table}: a row's Profile is not among those counted`);
  }
  const located = locateRows(read.profile_key, read.row_order, Int32Array.from(counts, ([, count]) => Number(count)));
  if (issue) {
    const k = read.profile_key[issue.row]!;
    const rows = located[k]!;
    const index = typeof rows === 'number' ? issue.row - rows : rows.indexOf(issue.row);
    throw new ProfileRowError(table, ids[k]!, index, `${issue.column} is ${issue.problem}`);
  }
  const names = Object.keys(schema);
  return new Map(
    ids.map((id, k) => {
      const rows = located[k]!;
      const count = Number(counts[k]![1]);
      const columns = names.map((name) => {
        const from: Int32Array<ArrayBuffer> | Float64Array<ArrayBuffer> = read[name as keyof typeof read];
        if (typeof rows === 'number') return [name, from.subarray(rows, rows + count)];
        return [name, from instanceof Int32Array ? gather(from, new Int32Array(count), rows) : gather(from, new Float64Array(count), rows)];
      });
      return [id, Object.fromEntries(columns) as NumericColumns<S>];
    }),
  );
}

const BOUNDARIES = BoundarySchema.options;
/** Each boundary as its index in BOUNDARIES, -1 for a name the contract does not know. */
const BOUNDARY_CODE = `coalesce(CASE boundary ${BOUNDARIES.map((b, i) => `WHEN '${b}' THEN ${i}`).join(' ')} END, -1)::INTEGER AS boundary`;

/** Every Profile's raw samples in seq order, column by column, each value checked as SampleColumnsSchema would. */
export async function readSampleColumns(connection: DuckDBConnection): Promise<Map<string, SampleColumns>> {
  const profiles = await readProfileRows(connection, 'samples', 'seq', `session, batch, ${BOUNDARY_CODE}, ns`, {
    session: 'int32',
    batch: 'int32',
    boundary: 'int32',
    ns: 'finite',
  });
  const samples = new Map<string, SampleColumns>();
  for (const [profileId, columns] of profiles) {
    const codes = columns.boundary;
    const unknown = codes.findIndex((code) => code < 0);
    if (unknown >= 0) {
      const name = (await connection.runAndReadAll('SELECT boundary FROM samples WHERE profile_id = $1 ORDER BY seq LIMIT 1 OFFSET $2', [profileId, unknown])).getRows();
      throw new ProfileRowError('samples', profileId, unknown, `boundary ${JSON.stringify(name[0]?.[0])} is not one of ${BOUNDARIES.join(', ')}`);
    }
    const boundary = new Array<Boundary>(codes.length);
    for (let i = 0; i < codes.length; i++) boundary[i] = BOUNDARIES[codes[i]!]!;
    samples.set(profileId, { session: columns.session, batch: columns.batch, boundary, ns: columns.ns });
  }
  return samples;
}

/** Every Profile's sessions' throughputs (samples/s), in session order. */
export async function readSessionThroughputs(connection: DuckDBConnection): Promise<Map<string, number[]>> {
  const profiles = await readProfileRows(connection, 'sessions', 'session_index', 'throughput_sps', { throughput_sps: 'finite' });
  return new Map([...profiles].map(([profileId, columns]) => [profileId, Array.from(columns.throughput_sps)]));
}
