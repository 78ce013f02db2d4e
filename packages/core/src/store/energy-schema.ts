/**
 * Schema v5: each Profile's energy per sample, its mean watts, the method that gave it (rapl, nvml_energy,
 * nvml_power, estimated_tdp) and the reason when it is NULL or estimated, as profiles columns (every domain stays in
 * profile_json); the leaderboard adds energy_j_per_sample and energy_method.
 */
export const ENERGY_COLUMNS = ['energy_j_per_sample DOUBLE', 'energy_mean_w DOUBLE', 'energy_method VARCHAR', 'energy_reason VARCHAR'] as const;

/** Profiles whose stored JSON already holds energy (written before the columns existed) get their columns from it. */
export const ENERGY_BACKFILL = `UPDATE profiles SET
  energy_j_per_sample = TRY_CAST(json_extract_string(profile_json, '$.energy.joules_per_sample') AS DOUBLE),
  energy_mean_w = TRY_CAST(json_extract_string(profile_json, '$.energy.mean_watts') AS DOUBLE),
  energy_method = json_extract_string(profile_json, '$.energy.method'),
  energy_reason = json_extract_string(profile_json, '$.energy.reason')
WHERE json_extract(profile_json, '$.energy') IS NOT NULL`;

const LEADERBOARD_COLUMNS = `  p.energy_j_per_sample,
  p.energy_method,
`;

/** v4's leaderboard (its text, as migrations.ts builds it) plus the energy columns, before peak_rss_mb. */
export function energyLeaderboard(v4: string): string {
  const anchor = '  p.peak_rss_mb,\n';
  if (!v4.includes(anchor)) throw new Error(`store migration v5: the v4 leaderboard has no "${anchor.trim()}" to extend`);
  return v4.replace(anchor, LEADERBOARD_COLUMNS + anchor);
}
