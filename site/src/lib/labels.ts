import type { Precision, ProfileStatus, PublishedProfile } from '@pbh/core';
import { fmtNum } from './format.js';
import { html, type Html } from './html.js';

/**
 * The executed precision, with what was asked for when the runtime did something else ("fp32 (asked bf16)"):
 * a runtime that ignores a request must not pass for one that honoured it. Null before a precision was resolved,
 * and in Profiles stored before precision was recorded.
 */
export function precisionText(executed: Precision | null, requested: Precision | null): string | null {
  if (executed === null) return null;
  return requested === null || requested === executed ? executed : `${executed} (asked ${requested})`;
}

/**
 * The boundary a set of headline latencies is at, for a column heading or an axis: the one boundary they share, or
 * "headline" when they mix (an engine that does not report its time is headlined at predict), in which case each
 * value names its own. Only measured rows count.
 */
export function latencyHeading(
  profiles: readonly Pick<PublishedProfile, 'p50_ms' | 'latency_boundary'>[],
): { label: PublishedProfile['latency_boundary'] | 'headline'; mixed: boolean } {
  const boundaries = new Set(profiles.filter((p) => p.p50_ms !== null).map((p) => p.latency_boundary));
  const [only] = boundaries;
  return boundaries.size === 1 && only !== undefined ? { label: only, mixed: false } : { label: 'headline', mixed: boundaries.size > 1 };
}

/**
 * A scenario's verdict in words, for the leaderboard badge's tooltip: VALID or INVALID with the figure the scenario
 * reports, then every reason it is INVALID, one a line. Null where the scenario never ran.
 */
export function verdictText(
  p: Pick<PublishedProfile, 'validity' | 'validity_reasons' | 'scenario_metric' | 'scenario_value'>,
): string | null {
  if (p.validity === null) return null;
  const figure = p.scenario_metric === null ? '' : ` (${p.scenario_metric} ${fmtNum(p.scenario_value)})`;
  return [`${p.validity}${figure}`, ...(p.validity_reasons ?? []).map((reason) => `• ${reason}`)].join('\n');
}

/**
 * A status in words (its table cells and badges). Status says whether the cell produced a result; the verdict
 * (VALID/INVALID) says whether that result meets LoadGen's rules. `invalid_output` reads "wrong output" so that no
 * status is mistaken for the INVALID verdict.
 */
export const STATUS_TEXT: Record<ProfileStatus, string> = {
  ok: 'ok',
  failed: 'failed',
  timeout: 'timeout',
  skipped: 'skipped',
  invalid_output: 'wrong output',
};

/** A status as the site's badge (site.css colours `status-<status>`), named as a status. */
export function statusHtml(status: ProfileStatus): Html {
  return html`<span class="status status-${status}" title="status: did the cell produce a result">${STATUS_TEXT[status]}</span>`;
}

/** A verdict as the site's badge, named as a verdict; null where the Profile has none. */
export function verdictHtml(validity: 'VALID' | 'INVALID' | null, root: string): Html | null {
  if (validity === null) return null;
  return html`<a class="verdict verdict-${validity.toLowerCase()}" href="${root}glossary.html#verdict" title="verdict: does the run meet LoadGen's rules">${validity}</a>`;
}
