import type { DuckDBMaterializedResult } from '@duckdb/node-api';
import { basename } from 'node:path';
import { z } from 'zod';
import { runQuery } from '../store/query.js';
import { openStore, type ProfileStore } from '../store/store.js';
import { ProfileRowError, readSampleColumns, readSessionThroughputs } from './profile-lists.js';
import { PublishedProfileSchema, PublishedRunSchema, SITE_DATA_VERSION, type SampleColumns, type SiteData } from './site-data.js';

// engine_entry and scenario use the leaderboard view's expressions, so a Profile of any status reads as the view would show it.

/**
 * The leaderboard view holds ok Profiles only; every other Profile gets its headline latency by the view's own rule
 * (the engine or query boundary when it is the headline, else predict), so a row reads the same whatever its status.
 */
const headline = (stat: 'p50' | 'p99'): string =>
  `CASE WHEN l.profile_id IS NOT NULL THEN l.${stat}_ms WHEN p.headline_boundary = 'engine' THEN p.engine_${stat}_ms ` +
  `WHEN p.headline_boundary = 'query' THEN p.query_${stat}_ms ELSE p.predict_${stat}_ms END`;

/** The leaderboard view's hardware expression (schema v3), for Profiles of every status. */
const HARDWARE = `coalesce(s.cpu_model || ' (' || s.cpu_cores || ' threads)' ||
  coalesce(' + ' || nullif(array_to_string(json_extract_string(s.gpus, '$[*].model'), ', '), ''), ''), 'unknown system')`;

/**
 * One JSON text per Profile, {"row": its columns, "profile": its stored JSON}, with its place in (created_at,
 * profile_id) order: DuckDB writes the JSON and JSON.parse reads it, where converting each of ~80 columns a row value
 * by value cost more than both, and sorting the rows carried ~11 KB of JSON each through the sort. The stored JSON is
 * spliced in as text (to_json would parse and rewrite it). Timestamps are ISO 8601 in UTC (as toISOString writes them),
 * doubles in shortest round-trip form.
 */
const PROFILE_SQL = `
SELECT o.ord, '{"row":' || to_json(t)::VARCHAR || ',"profile":' || j.profile_json::VARCHAR || '}' AS row FROM (
SELECT p.profile_id, p.run_id, r.name AS run_name, p.cell_key, strftime(timezone('UTC', p.created_at), '%Y-%m-%dT%H:%M:%S.%gZ') AS created_at, p.status, p.error, p.model_name, p.model_sha256,
  p.model_family, p.engine_name, p.engine_label, coalesce(p.engine_label, p.engine_name) AS engine_entry, p.engine_version, p.engine_device, p.engine_compile_ms,
  p.precision_executed AS precision, p.precision_requested, p.dataset_name, p.batch_size,
  coalesce(p.scenario, 'single_stream') AS scenario, p.validity, p.validity_reasons,
  p.scenario_metric, p.scenario_value,
  p.session_count, p.samples_per_session, p.throughput_mean, p.throughput_std, p.throughput_ci95_low, p.throughput_ci95_high,
  p.headline_boundary, coalesce(l.latency_boundary, p.headline_boundary, 'predict') AS latency_boundary,
  ${headline('p50')} AS p50_ms, ${headline('p99')} AS p99_ms,
  p.predict_p50_ms, p.predict_p99_ms, p.engine_p50_ms, p.engine_p99_ms, p.transport_p50_ms, p.end_to_end_p50_ms, p.model_only_p50_ms,
  p.query_p50_ms, p.query_p99_ms,
  p.peak_rss_mb, p.peak_device_mb, p.achieved_flops, p.peak_fraction, p.top1, p.top5,
  g.ttft_p50_ms, g.ttft_p99_ms, g.itl_p50_ms, g.itl_p99_ms, g.output_tokens_per_s, g.goodput_rps, g.perplexity, p.energy_j_per_sample, p.energy_mean_w, p.energy_method, p.command, p.system_id,
  s.cpu_model, s.cpu_cores, s.gpus, s.hostname, ${HARDWARE} AS hardware,
  m.sparsity_actual, m.sparsity_kind, m.parameters::DOUBLE AS parameters, m.flops_per_sample,
  l.rank_in_group
FROM profiles p
LEFT JOIN systems s ON s.system_id = p.system_id
LEFT JOIN models m ON m.model_sha256 = p.model_sha256
LEFT JOIN runs r ON r.run_id = p.run_id
LEFT JOIN leaderboard l ON l.profile_id = p.profile_id
LEFT JOIN generation g ON g.profile_id = p.profile_id
) t JOIN profiles j USING (profile_id)
JOIN (SELECT profile_id, (row_number() OVER (ORDER BY created_at, profile_id) - 1)::INTEGER AS ord FROM profiles) o USING (profile_id)`;

const RUN_SQL = `
SELECT r.run_id, r.name, r.started_at, r.finished_at, r.command, count(p.profile_id)::INTEGER AS profiles
FROM runs r LEFT JOIN profiles p ON p.run_id = r.run_id
GROUP BY ALL ORDER BY r.started_at, r.run_id`;

const ProfileQueryRowSchema = PublishedProfileSchema.omit({ session_throughputs: true, samples: true, profile: true });
const ProfileTextValueSchema = z.object({ row: ProfileQueryRowSchema, profile: PublishedProfileSchema.shape.profile });
type ProfileRow = z.output<typeof ProfileTextValueSchema>;
const ProfileTextSchema = z.tuple([z.number().int(), z.string()]);

const FOREIGN_DATABASE = 'The database may come from another pbh version; rebuild it with this one or report the message.';

function badRow(file: string, row: number | string, problem: string, sql: string): Error {
  return new Error(`Row ${row} read for the site from ${file} has an unexpected shape (${problem}). ${FOREIGN_DATABASE}\nQuery: ${sql}`);
}

/** One Profile's text: its row number (in created_at order) and the value JSON.parse made of it. */
function parseRow(file: string, cells: unknown[], index: number): { ord: number; value: unknown } {
  const envelope = ProfileTextSchema.safeParse(cells);
  if (!envelope.success) throw badRow(file, index, `not (ord, JSON text): ${z.prettifyError(envelope.error)}`, PROFILE_SQL);
  const [ord, text] = envelope.data;
  try {
    return { ord, value: JSON.parse(text) as unknown };
  } catch (error) {
    // DuckDB writes a NaN or infinite double as NaN or Infinity, which JSON has no words for.
    const why = error instanceof Error ? error.message : String(error);
    throw badRow(file, ord, `not JSON: ${why}; a NaN or infinite number, which the site cannot show, is the likely cause`, PROFILE_SQL);
  }
}

/**
 * Every Profile's row, in (created_at, profile_id) order, each validated against the published contract, from
 * PROFILE_SQL's materialized result. Read chunk by chunk, each text parsed as soon as it is decoded: holding all
 * ~110 MB of text (10,000 Profiles) until the end made the garbage collector copy it over and over.
 */
const YIELD_EVERY = 256;

async function parseProfiles(file: string, result: DuckDBMaterializedResult): Promise<ProfileRow[]> {
  const rows: (ProfileRow | undefined)[] = [];
  let index = 0;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const ords = chunk.getColumnValues(0);
    const texts = chunk.getColumnValues(1);
    for (let i = 0; i < chunk.rowCount; i++, index++) {
      // A turn for the other reads every few hundred Profiles: each of their queries waits for one to be issued.
      if (index % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setImmediate(resolve));
      const { ord, value } = parseRow(file, [ords[i], texts[i]], index);
      const parsed = ProfileTextValueSchema.safeParse(value);
      if (!parsed.success) {
        const id = (value as { row?: { profile_id?: unknown } } | null)?.row?.profile_id;
        throw badRow(file, `${ord} (Profile ${String(id)})`, z.prettifyError(parsed.error), PROFILE_SQL);
      }
      if (rows[ord] !== undefined) throw badRow(file, ord, `Profile ${parsed.data.row.profile_id} joins more than one row`, PROFILE_SQL);
      rows[ord] = parsed.data;
    }
  }
  // Each row took its own place (row_number() numbers them 0 to n-1), so none is left empty.
  if (rows.length !== index) throw badRow(file, rows.length - 1, `${index} rows numbered up to ${rows.length - 1}`, PROFILE_SQL);
  return rows as ProfileRow[];
}

/** Every Profile's session throughputs and raw samples, each value checked. */
async function readLists(store: ProfileStore): Promise<{ sessions: Map<string, number[]>; samples: Map<string, SampleColumns> }> {
  return store.withConnection(async (connection) => {
    try {
      return { sessions: await readSessionThroughputs(connection), samples: await readSampleColumns(connection) };
    } catch (error) {
      if (!(error instanceof ProfileRowError)) throw error;
      throw new Error(
        `The ${error.table} read for the site from ${store.file} hold a value the site cannot publish: ${error.message}. ${FOREIGN_DATABASE}`,
        { cause: error },
      );
    }
  });
}

async function select<S extends z.ZodType>(store: ProfileStore, sql: string, schema: S): Promise<z.output<S>[]> {
  const result = await runQuery(store, sql);
  return result.rows.map((row, index) => {
    const parsed = schema.safeParse(Object.fromEntries(result.columns.map((column, i) => [column, row[i] ?? null])));
    if (!parsed.success) throw badRow(store.file, index, z.prettifyError(parsed.error), sql);
    return parsed.data;
  });
}

/**
 * Everything a results website shows, from the store at `path` opened read-only and closed again,
 * every value validated. A file held by a running `pbh run` throws StoreLockedError; a missing one
 * StoreNotFoundError; a foreign or unmigrated one StoreSchemaError.
 */
export async function readSiteData(path: string): Promise<SiteData> {
  const store = await openStore(path, { readOnly: true });
  try {
    const profileResult = await store.withConnection((connection) => connection.run(PROFILE_SQL)).catch((error: unknown) => {
      throw new Error(`Reading the Profiles for the site from ${store.file} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    });
    // The result is materialized, so DuckDB's threads run the other queries while this one parses the Profiles.
    const [rows, runs, { sessions, samples }] = await Promise.all([
      parseProfiles(store.file, profileResult),
      select(store, RUN_SQL, PublishedRunSchema),
      readLists(store),
    ]);
    return {
      version: SITE_DATA_VERSION,
      db_file: basename(store.file),
      // Set in place, not copied (~90 fields a Profile): the parse made these objects for this read alone.
      profiles: rows.map(({ row, profile }) =>
        Object.assign(row, {
          // Rows copied or migrated with SQL may keep a stale id in profile_json: the table's columns are the record.
          profile: Object.assign(profile, { profile_id: row.profile_id, run_id: row.run_id, created_at: row.created_at }),
          session_throughputs: sessions.get(row.profile_id) ?? [],
          samples: samples.get(row.profile_id) ?? { session: [], batch: [], boundary: [], ns: [] },
        }),
      ),
      runs,
    };
  } finally {
    await store.close();
  }
}
