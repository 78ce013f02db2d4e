import { accuracyCosts, costCellHtml, scoreCellHtml, type AccuracyCost } from './accuracy.js';
import type { ProfileEntry } from './data.js';
import { escapeXml } from './escape.js';
import { CAUSES, explainFailure, type Cause } from './explain.js';
import { DASH, fmtDay, fmtNum, fmtPct, fmtPeakFraction } from './format.js';
import { statusHtml, verdictText } from './labels.js';
import type { RowGroup } from './leaderboard.js';
import { busyOf, doorOf } from './busy.js';
import { noiseOf } from './noise.js';
import { fmtJoules, methodWords } from './energy.js';
import { scrubberFor } from './scrub.js';

const REASON_CHARS = 150;
const WORDS_FIRST = new Set<Cause>(['precision', 'invalid', 'crash', 'unsupported']);

/** Columns of a Profile table, in order: ProfileTable.astro's headings and the client's filters read these indexes. */
export const COLUMNS = 13;

/**
 * The engine cell: the entry, and under it the engine's name where the entry is a label and the precision asked for
 * where the runtime executed another. data-v is what the table's filter and sort read (client/table.ts), so the
 * entry filters as itself, not run together with the second line.
 */
function engineCell(p: ProfileEntry): string {
  const entry = escapeXml(p.engine_entry);
  const sub = [
    ...(p.engine_entry === p.engine_name ? [] : [escapeXml(p.engine_name)]),
    ...(p.precision !== null && p.precision_requested !== null && p.precision_requested !== p.precision ? [`asked ${escapeXml(p.precision_requested)}`] : []),
  ];
  return sub.length === 0 ? `<td>${entry}` : `<td data-v="${entry}">${entry} <small class="sub">${sub.join(' · ')}</small>`;
}

/** The scenario's VALID/INVALID badge, with the reported figure and every reason in the tooltip (the Profile page lists them too). */
function verdictCell(p: ProfileEntry): string {
  const verdict = verdictText(p);
  if (p.validity === null || verdict === null) return `<td>${DASH}`;
  const validity = escapeXml(p.validity);
  return `<td data-v="${validity}"><span class="verdict verdict-${validity.toLowerCase()}" title="${escapeXml(verdict)}">${validity}</span>`;
}

/**
 * Throughput, the noisy mark (noise.ts) where the Profile's own figure is too uncertain to compare closely, and the
 * busy mark (busy.ts) where other processes competed for the CPU while it was measured.
 */
function throughputCell(p: ProfileEntry): string {
  const noise = noiseOf(p);
  const busy = busyOf(p);
  if (!noise.noisy && !busy.busy) return `<td>${fmtNum(p.throughput_mean)}`;
  const marks = [
    ...(noise.noisy ? [`<span class="noisy" title="${escapeXml(noise.brief)}">noisy</span>`] : []),
    ...(busy.busy ? [`<span class="noisy busy" title="${escapeXml(busy.text)}">busy</span>`] : []),
  ];
  return `<td data-v="${p.throughput_mean ?? ''}">${fmtNum(p.throughput_mean)} ${marks.join(' ')}`;
}

/** A ranked group whose rows were measured through different doors says so in its heading. */
function doorsNote(group: RowGroup): string {
  if (!group.ranked) return '';
  const doors = [...new Set(group.rows.map((p) => doorOf(p)).filter((d): d is string => d !== null))];
  return doors.length > 1 ? ` <span class="doors">measured through different doors: ${doors.map(escapeXml).join('; ')}</span>` : '';
}

/** The heading row of a group: the facts every row of it shares, the hardware among them, said once. */
function groupHeading(group: RowGroup): string {
  const facts = group.ranked
    ? [escapeXml(group.model), `batch ${group.batch}`, escapeXml(group.scenario ?? ''), escapeXml(group.precision ?? 'precision unknown')]
    : [escapeXml(group.model), 'not ranked: failed, timed out, skipped or invalid output'];
  return `<tr class="g"><th colspan="${COLUMNS}" scope="rowgroup">${facts.join(' · ')} <span class="hw">${escapeXml(group.hardware)}</span>${doorsNote(group)}`;
}

function groupData(group: RowGroup): string {
  const attrs: [string, string | number | null][] = [
    ['model', group.model], ['batch', group.batch], ['scenario', group.scenario], ['precision', group.ranked ? (group.precision ?? DASH) : null], ['hardware', group.hardware],
  ];
  return attrs.filter(([, v]) => v !== null).map(([k, v]) => ` data-${k}="${escapeXml(String(v))}"`).join('');
}

/** Energy per sample with its method in words under it (an estimate says so); a NULL shows why in its tooltip. */
function energyCell(p: ProfileEntry): string {
  if (p.energy_j_per_sample === null) {
    const why = p.profile.energy?.reason ?? 'not measured: stored before PBH measured energy';
    return `<td title="${escapeXml(why)}">${DASH}`;
  }
  return `<td data-v="${p.energy_j_per_sample}">${fmtJoules(p.energy_j_per_sample)} <small class="sub">${escapeXml(methodWords(p.energy_method))}</small>`;
}

function okRow(p: ProfileEntry, root: string, latency: (ms: number | null, p: ProfileEntry) => string, cost: AccuracyCost | undefined): string {
  const memory = p.peak_device_mb ?? p.peak_rss_mb;
  return (
    `<tr><td>${p.rank_in_group ?? ''}${engineCell(p)}<td>${escapeXml(p.engine_device)}${verdictCell(p)}${throughputCell(p)}` +
    `<td>${latency(p.p50_ms, p)}<td>${latency(p.p99_ms, p)}${scoreCellHtml(p)}${costCellHtml(cost)}<td>${fmtNum(memory)}<td>${fmtPeakFraction(p.peak_fraction, 2)}${energyCell(p)}` +
    profileLink(p, root)
  );
}

function failedRow(p: ProfileEntry, root: string): string {
  const explained = explainFailure(p, scrubberFor(p));
  // What happened in words where the recorded message is a measurement (an error bound, an exit signal); else the message.
  const message = explained === null ? 'no reason recorded' : WORDS_FIRST.has(explained.cause) ? explained.words : explained.message;
  const reason = message.length > REASON_CHARS ? `${message.slice(0, REASON_CHARS - 1)}…` : message;
  const cell = `b${p.batch_size} · ${escapeXml(p.scenario)}${p.precisionLabel ? ` · ${escapeXml(p.precisionLabel)}` : ''}`;
  const cause = explained ? `<b title="${escapeXml(explained.fix)}">${CAUSES[explained.cause]}</b>: ` : '';
  return (
    `<tr class="x"><td>${engineCell(p)}<td>${escapeXml(p.engine_device)}` +
    `<td colspan="${COLUMNS - 4}">${statusHtml(p.status).value} ${cell}. ${cause}${escapeXml(reason)}` +
    profileLink(p, root)
  );
}

const costCache = new WeakMap<ProfileEntry[], Map<string, AccuracyCost>>();

/** Every page of a build passes the same array of all Profiles: the costs are worked out once. */
function costsOf(all: ProfileEntry[]): Map<string, AccuracyCost> {
  let costs = costCache.get(all);
  if (!costs) {
    costs = accuracyCosts(all);
    costCache.set(all, costs);
  }
  return costs;
}

/** The date is the link to the Profile: one column fewer than a date and an "open" link side by side. */
const profileLink = (p: ProfileEntry, root: string): string => `<td><a href="${root}profiles/${p.slug}.html">${fmtDay(p.created_at)}</a>`;

/**
 * The table's bodies as HTML text, one <tbody> a group. Written by hand because at a thousand rows every byte counts:
 * optional end tags (</td>, </tr>, </tbody>) are left out, as HTML allows. Every database string goes through
 * escapeXml, the contract's enum values (scenario, validity) too; numbers are formatted here and carry nothing from
 * the database but digits, and a latency boundary is one of the contract's zod-checked enum values. `all` is every
 * Profile the accuracy cost may compare against (a paged leaderboard's rows are not all of them).
 */
export function profileBodiesHtml(groups: RowGroup[], root: string, mixedBoundaries: boolean, all: ProfileEntry[]): string {
  const costs = costsOf(all);
  // Where the column heading cannot name one boundary, every latency names its own.
  const latency = (ms: number | null, p: ProfileEntry): string =>
    mixedBoundaries && ms !== null ? `${fmtNum(ms)} <small class="sub">${p.latency_boundary}</small>` : fmtNum(ms);
  return groups
    .map(
      (group) =>
        `<tbody${groupData(group)}>${groupHeading(group)}` +
        group.rows.map((p) => (p.status === 'ok' ? okRow(p, root, latency, costs.get(p.profile_id)) : failedRow(p, root))).join(''),
    )
    .join('');
}
