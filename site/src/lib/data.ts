import { readSiteData, type PublishedProfile, type PublishedRun } from '@pbh/core';
import { precisionText } from './labels.js';
import { slugFor } from './slug.js';
import { exitIfStoreLocked, siteDbPath } from './site-db.js';

export interface ProfileEntry extends PublishedProfile {
  slug: string;
  modelSlug: string;
  engineSlug: string;
  /** Executed precision, with the request where the runtime did something else (labels.ts precisionText). */
  precisionLabel: string | null;
  /** (model, engine entry, precision, scenario, device, batch size, hardware): one line on the History page. */
  seriesKey: string;
  seriesSlug: string;
  /** top-1 where it was scored (of any output), else the first higher-is-better score. */
  accuracy: number | null;
  accuracyMetric: string | null;
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
  runs: PublishedRun[];
  models: NamedGroup[];
  engines: NamedGroup[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Profile page names: the first 12 hex digits of a UUID id (short links keep the leaderboard light),
 * the full id for any that collide, slugFor() for ids that are not UUIDs.
 */
function profileSlugs(ids: string[]): Map<string, string> {
  const shorts = ids.map((id) => (UUID.test(id) ? id.replace(/-/g, '').slice(0, 12) : slugFor(id)));
  const counts = new Map<string, number>();
  for (const short of shorts) counts.set(short, (counts.get(short) ?? 0) + 1);
  return new Map(ids.map((id, i) => [id, counts.get(shorts[i]!) === 1 ? shorts[i]! : slugFor(id)]));
}

function groupBy(profiles: ProfileEntry[], name: (p: ProfileEntry) => string): NamedGroup[] {
  const groups = new Map<string, ProfileEntry[]>();
  for (const p of profiles) {
    // Pushed in place: copying the group per Profile made 10,000 Profiles of a few models quadratic.
    const members = groups.get(name(p));
    if (members) members.push(p);
    else groups.set(name(p), [p]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([groupName, members]) => ({ name: groupName, slug: slugFor(groupName), profiles: members }));
}

/** slugFor, once per distinct name: thousands of Profiles share a few models, engines and series, and a slug may hash. */
function memoSlug(): (name: string) => string {
  const known = new Map<string, string>();
  return (name) => {
    let slug = known.get(name);
    if (slug === undefined) known.set(name, (slug = slugFor(name)));
    return slug;
  };
}

async function loadSiteData(): Promise<SiteData> {
  const published = await readSiteData(siteDbPath());
  const slugs = profileSlugs(published.profiles.map((p) => p.profile_id));
  const slug = memoSlug();
  const profiles: ProfileEntry[] = published.profiles.map((p) => {
    const precisionLabel = precisionText(p.precision, p.precision_requested);
    // Precision, the engine entry and the scenario are part of the cell: fp32 and bf16 of one engine, two labelled
    // entries of it with different options, or a server and a single-stream run are separate series, never one moving line.
    const seriesKey = [
      p.model_name, p.engine_entry, precisionLabel ?? 'precision unknown', p.scenario, p.engine_device, `batch ${p.batch_size}`, p.hardware,
    ].join(' · ');
    // A scorer that reads a non-first output names it (top1@probs); it is still top-1.
    const top1 = p.profile.scores.find((s) => s.metric === 'top1' || s.metric.startsWith('top1@'));
    const chosen = top1 ?? p.profile.scores.find((s) => s.higher_is_better);
    // Added in place: readSiteData's objects are this loader's alone, and copying ~90 fields a Profile cost more than the rest.
    return Object.assign(p, {
      slug: slugs.get(p.profile_id) ?? slugFor(p.profile_id),
      modelSlug: slug(p.model_name),
      engineSlug: slug(p.engine_name),
      precisionLabel,
      seriesKey,
      seriesSlug: slug(seriesKey),
      accuracy: chosen?.value ?? null,
      accuracyMetric: chosen?.metric ?? null,
    });
  });
  return {
    dbFile: published.db_file,
    builtAt: new Date().toISOString(),
    profiles,
    bySlug: new Map(profiles.map((p) => [p.slug, p])),
    runs: published.runs,
    models: groupBy(profiles, (p) => p.model_name),
    engines: groupBy(profiles, (p) => p.engine_name),
  };
}

/**
 * The build runs two copies of this module in one process: the pages' (Astro's SSR bundle) and the build
 * integration's (loaded with astro.config.ts), which writes the downloads. The read is kept on globalThis under a
 * registered symbol so that both share it instead of reading the database twice.
 */
const SHARED_READ = Symbol.for('pbh.site.data');
const shared = globalThis as { [SHARED_READ]?: Promise<SiteData> };

/** Everything the pages need, read once per build (every page and download shares it). */
export function siteData(): Promise<SiteData> {
  shared[SHARED_READ] ??= loadSiteData().catch((error: unknown) => {
    exitIfStoreLocked(error);
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`The PBH site could not read its database (${siteDbPath()}): ${message}`, { cause: error });
  });
  return shared[SHARED_READ];
}

