import { z } from 'zod';
import { PrecisionSchema } from '../contracts/precision.js';
import { ProfileStatusSchema, ScenarioResultSchema } from '../contracts/profile.js';
import type { ProfileStore } from '../store/index.js';

/** One Profile as history and `pbh compare` read it: where it was measured, what it measured, how far to trust it. */
export const HistoryPointSchema = z.object({
  profile_id: z.string(),
  run_id: z.string(),
  run_name: z.string().nullable(),
  /** The git commit of the code that ran (the run's, else the Profile's system record); null where none was recorded. */
  git_sha: z.string().nullable(),
  cell_key: z.string(),
  /** ISO 8601, UTC. */
  created_at: z.string(),
  status: ProfileStatusSchema,
  error: z.string().nullable(),
  model_name: z.string(),
  engine_name: z.string(),
  /** The config entry's label, else the engine name. */
  engine_entry: z.string(),
  engine_version: z.string().nullable(),
  device: z.string(),
  precision: PrecisionSchema.nullable(),
  scenario: ScenarioResultSchema.shape.kind,
  batch_size: z.number().int(),
  /** CPU model and logical cores with the GPUs' models, as the leaderboard view groups by. */
  hardware: z.string(),
  /** The leaderboard's ranked figure: mean throughput across sessions (samples/s; output tokens/s for generate). */
  throughput: z.number().nullable(),
  ci95_low: z.number().nullable(),
  ci95_high: z.number().nullable(),
  /** Each session's throughput and wall time, in session order. */
  sessions: z.array(z.number()),
  session_wall_ms: z.array(z.number()),
  /** profile.interference.busy: other work competed for the CPU; null for Profiles stored before it was measured. */
  busy: z.boolean().nullable(),
  /** The stored verdict (profiles.noisy, judged once at assembly): too noisy to compare, and why. */
  noisy: z.boolean(),
  short_session_ms: z.number().nullable(),
  ci_half_width: z.number().nullable(),
});
export type HistoryPoint = z.output<typeof HistoryPointSchema>;

const HARDWARE = `coalesce(s.cpu_model || ' (' || s.cpu_cores || ' threads)' ||
  coalesce(' + ' || nullif(array_to_string(json_extract_string(s.gpus, '$[*].model'), ', '), ''), ''), 'unknown system')`;

/** One JSON text a Profile, oldest first: DuckDB writes it and zod checks it, as the site's read does. */
const POINTS_SQL = `
SELECT to_json(t)::VARCHAR FROM (
SELECT p.profile_id, p.run_id, r.name AS run_name,
  coalesce(r.git_sha, json_extract_string(p.profile_json, '$.system.git_sha')) AS git_sha,
  p.cell_key, strftime(timezone('UTC', p.created_at), '%Y-%m-%dT%H:%M:%S.%gZ') AS created_at, p.status, p.error,
  p.model_name, p.engine_name, coalesce(p.engine_label, p.engine_name) AS engine_entry, p.engine_version,
  p.engine_device AS device, p.precision_executed AS precision, coalesce(p.scenario, 'single_stream') AS scenario,
  p.batch_size, ${HARDWARE} AS hardware,
  CASE WHEN p.status = 'ok' THEN p.throughput_mean END AS throughput,
  CASE WHEN p.status = 'ok' THEN p.throughput_ci95_low END AS ci95_low,
  CASE WHEN p.status = 'ok' THEN p.throughput_ci95_high END AS ci95_high,
  coalesce(x.sessions, []) AS sessions, coalesce(x.walls, []) AS session_wall_ms,
  p.busy, p.status = 'ok' AND coalesce(p.noisy, false) AS noisy, p.short_session_ms, p.ci_half_width
FROM profiles p
LEFT JOIN systems s ON s.system_id = p.system_id
LEFT JOIN runs r ON r.run_id = p.run_id
LEFT JOIN (
  SELECT profile_id, list(throughput_sps ORDER BY session_index) AS sessions, list(wall_ns / 1e6 ORDER BY session_index) AS walls
  FROM sessions GROUP BY profile_id
) x ON x.profile_id = p.profile_id
ORDER BY p.created_at, p.profile_id) t`;

/** Every Profile of the store, oldest first, checked with zod; a row that fails names the file and the Profile. */
export async function readHistoryPoints(store: ProfileStore): Promise<HistoryPoint[]> {
  return store.withConnection(async (connection) => {
    const reader = await connection.runAndReadAll(POINTS_SQL);
    return reader.getRows().map((row) => {
      const json: unknown = JSON.parse(String(row[0]));
      const parsed = HistoryPointSchema.safeParse(json);
      if (!parsed.success) {
        const id = z.object({ profile_id: z.string() }).safeParse(json).data?.profile_id ?? '(unknown id)';
        throw new Error(`${store.file}: Profile ${id} does not read as a history point: ${parsed.error.message}`);
      }
      // Sessions of a non-ok Profile measured nothing the ranked figure counts.
      return parsed.data.status === 'ok' ? parsed.data : { ...parsed.data, sessions: [], session_wall_ms: [] };
    });
  });
}
