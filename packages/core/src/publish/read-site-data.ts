import { basename } from 'node:path';
import { z } from 'zod';
import { runQuery } from '../store/query.js';
import { openStore, type ProfileStore } from '../store/store.js';
import { ProfileRowError, readSampleColumns, readSessionThroughputs } from './profile-lists.js';
import { PublishedProfileSchema, PublishedRunSchema, SITE_DATA_VERSION, type SiteData } from './site-data.js';

// Every query goes through runQuery, so DuckDB values arrive as JSON: timestamps as ISO strings, BIGINT as numbers, lists as arrays.
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

const PROFILE_SQL = `
SELECT p.profile_id, p.run_id, r.name AS run_name, p.cell_key, p.created_at, p.status, p.error, p.model_name, p.model_sha256,
  p.model_family, p.engine_name, p.engine_label, coalesce(p.engine_label, p.engine_name) AS engine_entry, p.engine_version, p.engine_device, p.engine_compile_ms,
  p.precision_executed AS precision, p.precision_requested, p.dataset_name, p.batch_size,
  coalesce(p.scenario, 'single_stream') AS scenario, p.validity, p.validity_reasons::VARCHAR AS validity_reasons,
  p.scenario_metric, p.scenario_value,
  p.session_count, p.samples_per_session, p.throughput_mean, p.throughput_std, p.throughput_ci95_low, p.throughput_ci95_high,
  p.headline_boundary, coalesce(l.latency_boundary, p.headline_boundary, 'predict') AS latency_boundary,
  ${headline('p50')} AS p50_ms, ${headline('p99')} AS p99_ms,
  p.predict_p50_ms, p.predict_p99_ms, p.engine_p50_ms, p.engine_p99_ms, p.transport_p50_ms, p.end_to_end_p50_ms, p.model_only_p50_ms,
  p.query_p50_ms, p.query_p99_ms,
  p.peak_rss_mb, p.peak_device_mb, p.achieved_flops, p.peak_fraction, p.top1, p.top5,
  g.ttft_p50_ms, g.ttft_p99_ms, g.itl_p50_ms, g.itl_p99_ms, g.output_tokens_per_s, g.goodput_rps, g.perplexity, p.command, p.system_id,
  s.cpu_model, s.cpu_cores, s.gpus::VARCHAR AS gpus, s.hostname, ${HARDWARE} AS hardware,
  m.sparsity_actual, m.sparsity_kind, m.parameters::DOUBLE AS parameters, m.flops_per_sample,
  l.rank_in_group, p.profile_json::VARCHAR AS profile
FROM profiles p
LEFT JOIN systems s ON s.system_id = p.system_id
LEFT JOIN models m ON m.model_sha256 = p.model_sha256
LEFT JOIN runs r ON r.run_id = p.run_id
LEFT JOIN leaderboard l ON l.profile_id = p.profile_id
LEFT JOIN generation g ON g.profile_id = p.profile_id
ORDER BY p.created_at, p.profile_id`;

const RUN_SQL = `
SELECT r.run_id, r.name, r.started_at, r.finished_at, r.command, count(p.profile_id)::INTEGER AS profiles
FROM runs r LEFT JOIN profiles p ON p.run_id = r.run_id
GROUP BY ALL ORDER BY r.started_at, r.run_id`;

/** JSON columns come as text; parsed here so the schema checks what they hold. */
function jsonText<S extends z.ZodType>(schema: S) {
  return z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        ctx.issues.push({ code: 'custom', message: `not JSON (${error instanceof Error ? error.message : String(error)})`, input: text });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

const ProfileQueryRowSchema = PublishedProfileSchema.omit({ session_throughputs: true, samples: true }).extend({
  gpus: jsonText(PublishedProfileSchema.shape.gpus.unwrap()).nullable(),
  validity_reasons: jsonText(PublishedProfileSchema.shape.validity_reasons.unwrap()).nullable(),
  profile: jsonText(PublishedProfileSchema.shape.profile),
});

async function select<S extends z.ZodType>(store: ProfileStore, sql: string, schema: S): Promise<z.output<S>[]> {
  const result = await runQuery(store, sql);
  return result.rows.map((row, index) => {
    const parsed = schema.safeParse(Object.fromEntries(result.columns.map((column, i) => [column, row[i] ?? null])));
    if (!parsed.success) {
      throw new Error(
        `Row ${index} read for the site from ${store.file} has an unexpected shape (${z.prettifyError(parsed.error)}). ` +
          `The database may come from another pbh version; rebuild it with this one or report the message.\nQuery: ${sql}`,
      );
    }
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
    const rows = await select(store, PROFILE_SQL, ProfileQueryRowSchema);
    const runs = await select(store, RUN_SQL, PublishedRunSchema);
    const { sessions, samples } = await store.withConnection(async (connection) => {
      try {
        return { sessions: await readSessionThroughputs(connection), samples: await readSampleColumns(connection) };
      } catch (error) {
        if (!(error instanceof ProfileRowError)) throw error;
        throw new Error(
          `The ${error.table} read for the site from ${store.file} hold a value the site cannot publish: ${error.message}. ` +
            `The database may come from another pbh version; rebuild it with this one or report the message.`,
          { cause: error },
        );
      }
    });
    return {
      version: SITE_DATA_VERSION,
      db_file: basename(store.file),
      profiles: rows.map((row) => ({
        ...row,
        // Rows copied or migrated with SQL may keep a stale id in profile_json: the table's columns are the record.
        profile: { ...row.profile, profile_id: row.profile_id, run_id: row.run_id, created_at: row.created_at },
        session_throughputs: sessions.get(row.profile_id) ?? [],
        samples: samples.get(row.profile_id) ?? { session: [], batch: [], boundary: [], ns: [] },
      })),
      runs,
    };
  } finally {
    await store.close();
  }
}
