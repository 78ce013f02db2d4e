import { basename } from 'node:path';
import { ProfileSchema, type Profile } from '@pbh/core';
import { z } from 'zod';
import {
  GpuListSchema,
  ProfileJsonRowSchema,
  ProfileRowSchema,
  RunRowSchema,
  SampleListsSchema,
  ScoreRowSchema,
  SessionThroughputSchema,
  type ProfileRow,
  type RunRow,
  type SampleLists,
} from './rows.js';
import { slugFor } from './slug.js';
import { selectRows, siteDbPath, siteStore } from './store-read.js';

export type { ProfileRow, RunRow, SampleLists } from './rows.js';

export interface ProfileEntry extends ProfileRow {
  slug: string;
  modelSlug: string;
  engineSlug: string;
  /** CPU model and threads (and GPUs), what "hardware" means in filters and comparisons. */
  hardware: string;
  /** (model, engine, device, batch size, hardware): one line on the History page. */
  seriesKey: string;
  seriesSlug: string;
  /** top-1 where it was scored, else the first higher-is-better score. */
  accuracy: number | null;
  accuracyMetric: string | null;
  /** Throughput rank among ok Profiles of the same model (the leaderboard view's rank_in_model); null unless ok. */
  rank: number | null;
  /** Per-session throughputs (samples/s), the input of the History page's test. */
  sessionThroughputs: number[];
}

export interface NamedGroup {
  name: string;
  slug: string;
  profiles: ProfileEntry[];
}

export interface SiteData {
  dbFile: string;
  builtAt: string;
  profiles: ProfileEntry[];
  bySlug: Map<string, ProfileEntry>;
  runs: RunRow[];
  models: NamedGroup[];
  engines: NamedGroup[];
  profileJson: Map<string, string>;
  samples: Map<string, SampleLists>;
}

const PROFILE_SQL = `
SELECT p.profile_id, p.run_id, p.cell_key, p.created_at, p.status, p.error, p.model_name, p.model_sha256, p.model_family,
  p.engine_name, p.engine_version, p.engine_device, p.engine_compile_ms, p.dataset_name, p.batch_size, p.session_count,
  p.samples_per_session, p.throughput_mean, p.throughput_std, p.throughput_ci95_low, p.throughput_ci95_high,
  p.predict_p50_ms, p.predict_p99_ms, p.engine_p50_ms, p.end_to_end_p50_ms, p.model_only_p50_ms,
  p.peak_rss_mb, p.peak_device_mb, p.achieved_flops, p.peak_fraction, p.top1, p.top5, p.command, p.system_id,
  s.cpu_model, s.cpu_cores, s.gpus::VARCHAR AS gpus, s.hostname,
  m.sparsity_actual, m.sparsity_kind, m.parameters::DOUBLE AS parameters, m.flops_per_sample, r.name AS run_name
FROM profiles p
LEFT JOIN systems s ON s.system_id = p.system_id
LEFT JOIN models m ON m.model_sha256 = p.model_sha256
LEFT JOIN runs r ON r.run_id = p.run_id
ORDER BY p.created_at, p.profile_id`;

const RUN_SQL = `
SELECT r.run_id, r.name, r.started_at, r.finished_at, r.command, count(p.profile_id)::INTEGER AS profiles
FROM runs r LEFT JOIN profiles p ON p.run_id = r.run_id
GROUP BY ALL ORDER BY r.started_at, r.run_id`;

const SESSION_SQL = `
SELECT profile_id, list(throughput_sps ORDER BY session_index) AS throughputs FROM sessions GROUP BY profile_id`;

const SCORE_SQL = `SELECT profile_id, metric, value, higher_is_better FROM scores ORDER BY profile_id, seq`;

const SAMPLE_SQL = `
SELECT profile_id, list(session ORDER BY seq) AS session, list(batch ORDER BY seq) AS batch,
  list(boundary ORDER BY seq) AS boundary, list(ns ORDER BY seq) AS ns
FROM samples GROUP BY profile_id`;

const PROFILE_JSON_SQL = `SELECT profile_id, profile_json::VARCHAR AS json FROM profiles`;

function hardwareLabel(row: ProfileRow): string {
  if (row.cpu_model === null) return 'unknown system';
  const gpus = row.gpus ? GpuListSchema.safeParse(JSON.parse(row.gpus)) : null;
  const gpuText = gpus?.success && gpus.data.length > 0 ? ` + ${gpus.data.map((g) => g.model).join(', ')}` : '';
  return `${row.cpu_model} (${row.cpu_cores ?? '?'} threads)${gpuText}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Profile page names: the first 12 hex digits of a UUID id (short links keep the leaderboard light),
 * the full id for any that collide, slugFor() for ids that are not UUIDs.
 */
function profileSlugs(ids: string[]): Map<string, string> {
  const short = (id: string): string => (UUID.test(id) ? id.replace(/-/g, '').slice(0, 12) : slugFor(id));
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(short(id), (counts.get(short(id)) ?? 0) + 1);
  return new Map(ids.map((id) => [id, counts.get(short(id)) === 1 ? short(id) : slugFor(id)]));
}

function groupBy(profiles: ProfileEntry[], name: (p: ProfileEntry) => string): NamedGroup[] {
  const groups = new Map<string, ProfileEntry[]>();
  for (const p of profiles) groups.set(name(p), [...(groups.get(name(p)) ?? []), p]);
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([groupName, members]) => ({ name: groupName, slug: slugFor(groupName), profiles: members }));
}

/** Throughput rank within each model among ok Profiles, as the leaderboard view ranks them. */
function assignRanks(profiles: ProfileEntry[]): void {
  for (const group of groupBy(profiles, (p) => p.model_name)) {
    const ranked = group.profiles
      .filter((p) => p.status === 'ok')
      .sort((a, b) => (b.throughput_mean ?? -Infinity) - (a.throughput_mean ?? -Infinity) || a.profile_id.localeCompare(b.profile_id));
    ranked.forEach((p, index) => (p.rank = index + 1));
  }
}

async function loadSiteData(): Promise<SiteData> {
  const store = await siteStore();
  const [rows, runs, sessions, scores, samples, jsonRows] = [
    await selectRows(PROFILE_SQL, ProfileRowSchema),
    await selectRows(RUN_SQL, RunRowSchema),
    await selectRows(SESSION_SQL, SessionThroughputSchema),
    await selectRows(SCORE_SQL, ScoreRowSchema),
    await selectRows(SAMPLE_SQL, SampleListsSchema),
    await selectRows(PROFILE_JSON_SQL, ProfileJsonRowSchema),
  ];
  const sessionMap = new Map(sessions.map((s) => [s.profile_id, s.throughputs]));
  const firstScore = new Map<string, { metric: string; value: number }>();
  for (const s of scores) if (s.higher_is_better && !firstScore.has(s.profile_id)) firstScore.set(s.profile_id, s);

  const slugs = profileSlugs(rows.map((r) => r.profile_id));
  const profiles: ProfileEntry[] = rows.map((row) => {
    const hardware = hardwareLabel(row);
    const seriesKey = [row.model_name, row.engine_name, row.engine_device, `batch ${row.batch_size}`, hardware].join(' · ');
    const other = firstScore.get(row.profile_id);
    return {
      ...row,
      slug: slugs.get(row.profile_id) ?? slugFor(row.profile_id),
      modelSlug: slugFor(row.model_name),
      engineSlug: slugFor(row.engine_name),
      hardware,
      seriesKey,
      seriesSlug: slugFor(seriesKey),
      accuracy: row.top1 ?? other?.value ?? null,
      accuracyMetric: row.top1 !== null ? 'top1' : (other?.metric ?? null),
      rank: null,
      sessionThroughputs: sessionMap.get(row.profile_id) ?? [],
    };
  });
  assignRanks(profiles);
  return {
    dbFile: basename(store.file),
    builtAt: new Date().toISOString(),
    profiles,
    bySlug: new Map(profiles.map((p) => [p.slug, p])),
    runs,
    models: groupBy(profiles, (p) => p.model_name),
    engines: groupBy(profiles, (p) => p.engine_name),
    profileJson: new Map(jsonRows.map((r) => [r.profile_id, r.json])),
    samples: new Map(samples.map((s) => [s.profile_id, s])),
  };
}

let loaded: Promise<SiteData> | undefined;

/** Everything the pages need, read once per build (every page and download shares it). */
export function siteData(): Promise<SiteData> {
  loaded ??= loadSiteData().catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`The PBH site could not read its database (${siteDbPath()}): ${message}`, { cause: error });
  });
  return loaded;
}

/** The stored Profile (profile_json) with its raw samples put back, validated by core's ProfileSchema. */
export function fullProfile(data: SiteData, entry: ProfileEntry): Profile {
  const json = data.profileJson.get(entry.profile_id);
  if (json === undefined) throw new Error(`Profile ${entry.profile_id} has no profile_json in ${data.dbFile}.`);
  const lists = data.samples.get(entry.profile_id);
  const samples = lists ? lists.ns.map((ns, i) => ({ session: lists.session[i], batch: lists.batch[i], boundary: lists.boundary[i], ns })) : [];
  const parsed = ProfileSchema.safeParse({ ...(JSON.parse(json) as Record<string, unknown>), samples });
  if (!parsed.success) {
    throw new Error(
      `Profile ${entry.profile_id} in ${data.dbFile} does not satisfy the Profile schema of this pbh: ${z.prettifyError(parsed.error)}`,
    );
  }
  // Replicated or migrated rows may carry a stale id in the JSON: the table's columns are the record.
  return { ...parsed.data, profile_id: entry.profile_id, run_id: entry.run_id, created_at: entry.created_at };
}

export const STATUS_TEXT: Record<ProfileRow['status'], string> = {
  ok: 'ok',
  failed: 'failed',
  timeout: 'timeout',
  skipped: 'skipped',
  invalid_output: 'invalid output',
};
