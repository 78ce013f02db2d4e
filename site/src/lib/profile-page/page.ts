import type { ProfileEntry } from '../data.js';
import { html } from '../html.js';
import { layoutParts } from '../layout.js';
import { latencyEcdf } from '../profile-view.js';
import { scrubberFor, scrubDeep } from '../scrub.js';
import { breakdownHtml } from './breakdown.js';
import { energyHtml } from './energy.js';
import { factsHtml } from './facts.js';
import { failureHtml } from './failure.js';
import { generationHtml } from './generation.js';
import { latencyHtml } from './latency.js';
import { scenarioHtml } from './scenario.js';
import { headHtml, profileTitle, summaryHtml } from './summary.js';

/**
 * A Profile's raw per-batch latencies in order, as SQL over the `samples` table: the SQL console runs it as it is, and
 * `FROM read_parquet('samples.parquet')` in place of `FROM samples` reads the Parquet export.
 */
export function samplesQuery(profileId: string): string {
  return `SELECT session, batch, boundary, ns FROM samples WHERE profile_id = '${profileId.replace(/'/g, "''")}' ORDER BY seq`;
}

/**
 * A Profile's page, the whole document. It is rendered outside Astro, on the build's worker threads
 * (integrations/profile-pages.ts), from `entry` alone and the link to its run's config: 10,000 of them as Astro routes
 * left the build's main thread the bottleneck. Only what the page's cache key hashes reaches it (cache.ts pageInputs).
 * Local paths become relative to the config (or the repository); stacks and stderr stay in the JSON download.
 */
export function profilePageHtml(entry: ProfileEntry, runConfig: string): string {
  const root = '../';
  const scrub = scrubberFor(entry);
  const { start, end } = layoutParts({ title: profileTitle(entry), depth: 1, stamp: null });
  const downloads = html`<p class="downloads">This Profile as stored: <a href="${root}data/profiles/${entry.slug}.json.gz" download>JSON.gz</a>. Its raw per-batch latencies: <a href="${root}sql.html#query=${encodeURIComponent(samplesQuery(entry.profile_id))}">query them in the SQL console</a>, or read them from <a href="${root}data/parquet/samples.parquet" download>samples.parquet</a> (<code>profile_id</code> = this Profile's).</p>`;
  return html`${start}${headHtml(entry, root)}${downloads}${failureHtml(entry, scrub, root)}${summaryHtml(entry)}${generationHtml(entry.profile)}${energyHtml({ ...entry.profile, energy: scrubDeep(entry.profile.energy, scrub) as typeof entry.profile.energy })}${scenarioHtml(entry)}${latencyHtml(entry, latencyEcdf(entry.samples, 'ecdf'))}${breakdownHtml(entry, root)}${factsHtml(entry, scrub, root, runConfig)}${end}`.value;
}

/**
 * A Profile's own download: the stored Profile, compact, without its raw samples (they are in samples.parquet and the
 * SQL console's copy, and the file says how to read them). A CSV of the samples beside each was a third copy of them,
 * 20 MB and 10,000 files at 10,000 Profiles. Local paths are relative to the config or the repository, as on its page.
 */
export function profileDownloadText(entry: ProfileEntry): string {
  const profile = scrubDeep({ ...entry.profile, samples_query: samplesQuery(entry.profile_id) }, scrubberFor(entry));
  return `${JSON.stringify(profile)}\n`;
}
