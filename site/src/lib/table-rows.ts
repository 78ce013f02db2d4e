import { accuracyCosts, costCellHtml, scoreCellHtml, type AccuracyCost } from './accuracy.js';
import type { ProfileEntry } from './data.js';
import { escapeXml } from './escape.js';
import { CAUSES, explainFailure, fixHtml, type Cause } from './explain.js';
import { groupAnswerHtml } from './group-summary.js';
import { DASH, fmtDay, fmtNum, fmtPct, fmtPeakFraction } from './format.js';
import { statusHtml, verdictText } from './labels.js';
import type { RowGroup } from './leaderboard.js';
import { busyOf, doorOf } from './busy.js';
import { noiseOf } from './noise.js';
import { fmtJoules, methodWords } from './energy.js';
import { scrubberFor } from './scrub.js';
import { tuningOf } from './tuning.js';

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
  const tuning = tuningOf(p);
  const sub = [
    ...(p.engine_entry === p.engine_name ? [] : [escapeXml(p.engine_name)]),
    // TVM untuned and tuned are different programs: a row says which, whatever the entry's label says.
    ...(tuning !== null && !p.engine_entry.includes(tuning) ? [tuning] : []),
    ...(p.precision !== null && p.precision_requested !== null && p.precision_requested !== p.precision ? [`asked ${escapeXml(p.precision_requested)}`] : []),
  ];
  return sub.length === 0 ? `<td>${entry}` : `<td data-v="${entry}">${entry} <small class="sub">${sub.join(' · ')}</small>`;
}

/**
 * The precision cell of a row (a ranked group holds every precision of its model and batch, each row says its own),
 * with the device under it where it is not the CPU. The row carries both for the filters (client/table.ts).
 */
function precisionCell(p: ProfileEntry): string {
  const precision = escapeXml(p.precision ?? DASH);
  return p.engine_device === 'cpu' ? `<td>${precision}` : `<td data-v="${precision}">${precision} <small class="sub">${escapeXml(p.engine_device)}</small>`;
}

/** A row's own facts for the filters: a group's heading says what all its rows share, but INVALID and failed groups mix batches and scenarios. */
const rowData = (p: ProfileEntry): string =>
  ` data-precision="${escapeXml(p.precision ?? DASH)}" data-device="${escapeXml(p.engine_device)}" data-batch="${p.batch_size}" data-scenario="${escapeXml(p.scenario)}"`;

/**
 * The scenario's VALID/INVALID badge, a link to the glossary's entry; an INVALID one says why in the row, in words
 * with the fix (the Profile page lists every reason too), the reported figure in the tooltip.
 */
function verdictCell(p: ProfileEntry, root: string): string {
  const verdict = verdictText(p);
  if (p.validity === null || verdict === null) return `<td>${DASH}`;
  const validity = escapeXml(p.validity);
  const badge = `<a class="verdict verdict-${validity.toLowerCase()}" href="${root}glossary.html#verdict" title="${escapeXml(verdict)}">${validity}</a>`;
  const reasons = p.validity === 'INVALID' ? (p.validity_reasons ?? []) : [];
  const why = reasons.length === 0 ? '' : ` <small class="why">${reasons.map((r) => escapeXml(shortReason(r))).join('; ')}</small>`;
  return `<td data-v="${validity}">${badge}${why}`;
}

/** A verdict reason without its "every session: " prefix, cut where a row cannot hold more. */
function shortReason(reason: string): string {
  const text = reason.replace(/^every session: /, '');
  return text.length > REASON_CHARS ? `${text.slice(0, REASON_CHARS - 1)}…` : text;
}

/**
 * Throughput, the noisy mark (noise.ts) where the Profile's own figure is too uncertain to compare closely, and the
 * busy mark (busy.ts) where other processes competed for the CPU while it was measured.
 */
function throughputCell(p: ProfileEntry, root: string): string {
  const noise = noiseOf(p);
  const busy = busyOf(p);
  if (!noise.noisy && !busy.busy) return `<td>${fmtNum(p.throughput_mean)}`;
  // The marks link to the glossary's rule (keyboard and touch reach it); why, in words with the fix, under them.
  const marks = [
    ...(noise.noisy ? [`<a class="noisy" href="${root}glossary.html#noisy">noisy</a>`] : []),
    ...(busy.busy ? [`<a class="noisy busy" href="${root}glossary.html#busy">busy</a>`] : []),
  ];
  const why = [...(noise.noisy ? [`${noise.brief}: ${NOISE_FIX}`] : []), ...(busy.busy ? [`${busy.text}: rerun with nothing else busy`] : [])];
  return `<td data-v="${p.throughput_mean ?? ''}">${fmtNum(p.throughput_mean)} ${marks.join(' ')} <small class="why">${escapeXml(why.join('; '))}</small>`;
}

/** The fix for a noisy Profile, in a row's few words (noise.ts has the rule). */
const NOISE_FIX = 'more sessions, longer ones (min_duration_ms) or a quieter machine';

/** A ranked group whose rows were measured through different doors says so in its heading. */
function doorsNote(group: RowGroup): string {
  if (group.kind === 'failed') return '';
  const doors = [...new Set(group.rows.map((p) => doorOf(p)).filter((d): d is string => d !== null))];
  if (doors.length < 2) return '';
  // Short in the heading (the table must fit its width); the doors in full in the tooltip.
  return ` <span class="doors" title="measured through different doors: ${escapeXml(doors.join('; '))}">doors differ</span>`;
}

/**
 * The heading row of a group: the facts every row of it shares, the hardware among them, said once; a ranked group
 * then gives its answer first (its fastest entry across precisions and what that costs in answers), and the
 * precisions side by side.
 */
function groupHeading(group: RowGroup, costs: ReadonlyMap<string, AccuracyCost>): string {
  const facts =
    group.kind === 'ranked'
      ? [escapeXml(group.model), `batch ${group.batch}`, escapeXml(group.scenario ?? '')]
      : group.kind === 'invalid'
        ? [escapeXml(group.model), 'measured, not ranked: INVALID by LoadGen\'s rules (each row says why and the fix)']
        : [escapeXml(group.model), 'no result: failed, timed out, skipped or wrong output (each row says why and the fix)'];
  const answer = group.kind === 'ranked' ? groupAnswerHtml(group.rows, costs) : '';
  // The heading's text in a block of its own, which a phone keeps in view while the row scrolls sideways (site.css).
  return `<tr class="g"><th colspan="${COLUMNS}" scope="rowgroup"><div class="gh">${facts.join(' · ')} <span class="hw">${escapeXml(group.hardware)}</span>${doorsNote(group)}${answer}</div>`;
}

function groupData(group: RowGroup): string {
  const attrs: [string, string | number | null][] = [['kind', group.kind], ['model', group.model], ['batch', group.batch], ['scenario', group.scenario], ['hardware', group.hardware]];
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

/** A measured row: its rank where its group is ranked (INVALID rows have none), its precision on the row itself. */
function okRow(p: ProfileEntry, rank: number | null, root: string, latency: (ms: number | null, p: ProfileEntry) => string, cost: AccuracyCost | undefined): string {
  const memory = p.peak_device_mb ?? p.peak_rss_mb;
  return (
    `<tr${rank === null ? ' class="iv"' : ''}${rowData(p)}><td>${rank ?? ''}${engineCell(p)}${precisionCell(p)}${verdictCell(p, root)}${throughputCell(p, root)}` +
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
  const cause = explained ? `<b>${CAUSES[explained.cause]}</b>: ` : '';
  // The fix in the row, not in a tooltip: keyboard and touch readers see it too.
  const fix = explained ? ` <small class="why">Fix: ${fixHtml(explained.fix).value}</small>` : '';
  return (
    `<tr class="x"${rowData(p)}><td>${engineCell(p)}${precisionCell(p)}` +
    `<td colspan="${COLUMNS - 4}">${statusHtml(p.status).value} ${cell}. ${cause}${escapeXml(reason)}${fix}` +
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
        `<tbody${groupData(group)}>${groupHeading(group, costs)}` +
        group.rows
          .map((p, i) => (p.status === 'ok' ? okRow(p, group.kind === 'ranked' ? i + 1 : null, root, latency, costs.get(p.profile_id)) : failedRow(p, root)))
          .join(''),
    )
    .join('');
}
