/**
 * Schema v7: the verdicts judged once at assembly (publish/verdicts.ts) as columns of profiles, how the rounds ended,
 * and the paired-round ratios between contenders of a group as their own table. Profiles stored before v7 get their
 * verdict columns, and a `verdicts` block in their JSON, from the same rules (publish/noise.ts: a session under 100 ms
 * or a CI half-width over 10% of the mean), so every reader reads a stored verdict whatever the Profile's age.
 */
export const VERDICT_COLUMNS = [
  'mlperf_validity VARCHAR',
  'noisy BOOLEAN',
  'short_session_ms DOUBLE',
  'ci_half_width DOUBLE',
  'busy BOOLEAN',
  'rounds_seed BIGINT',
  'stopped_by VARCHAR',
  'level_shifts INTEGER',
  'lead_claim VARCHAR',
] as const;

export const PAIR_RATIOS_TABLE = `CREATE TABLE pair_ratios (
  profile_id VARCHAR NOT NULL,
  other_profile_id VARCHAR NOT NULL,
  other_cell_key VARCHAR NOT NULL,
  other_engine VARCHAR NOT NULL,
  other_precision VARCHAR,
  ratio DOUBLE NOT NULL,
  ci95_low DOUBLE NOT NULL,
  ci95_high DOUBLE NOT NULL,
  rounds INTEGER NOT NULL,
  verdict VARCHAR NOT NULL CHECK (verdict IN ('faster', 'slower', 'tied')),
  PRIMARY KEY (profile_id, other_profile_id)
)`;

/** The noisy rule's numbers, as publish/noise.ts holds them (a test checks they agree). */
export const BACKFILL_MIN_SESSION_MS = 100;
export const BACKFILL_MAX_CI_HALF_WIDTH = 0.1;

export const VERDICT_BACKFILL = [
  `UPDATE profiles SET
  mlperf_validity = json_extract_string(profile_json, '$.scenario.mlperf.validity'),
  busy = TRY_CAST(json_extract_string(profile_json, '$.interference.busy') AS BOOLEAN),
  ci_half_width = CASE WHEN throughput_mean > 0 THEN (throughput_ci95_high - throughput_ci95_low) / 2 / throughput_mean END`,
  `UPDATE profiles SET short_session_ms = s.shortest_ms
FROM (SELECT profile_id, min(wall_ns) / 1e6 AS shortest_ms FROM sessions GROUP BY profile_id) s
WHERE profiles.profile_id = s.profile_id AND s.shortest_ms < ${BACKFILL_MIN_SESSION_MS}`,
  `UPDATE profiles SET noisy = short_session_ms IS NOT NULL OR coalesce(ci_half_width > ${BACKFILL_MAX_CI_HALF_WIDTH}, false)`,
  // The stored JSON is JSON.stringify's object: the verdicts block is spliced in before its closing brace.
  `UPDATE profiles SET profile_json = (rtrim(CAST(profile_json AS VARCHAR), '}') || ',"verdicts":' || CAST(json_object(
  'validity', validity, 'mlperf_validity', mlperf_validity, 'noisy', noisy, 'short_session_ms', short_session_ms,
  'ci_half_width', ci_half_width, 'busy', busy) AS VARCHAR) || '}')::JSON
WHERE json_extract(profile_json, '$.verdicts') IS NULL`,
];
