import type { StoredProfile } from '@pbh/core';
import { ENERGY_METHOD_WORDS, fmtJoules, methodWords } from '../energy.js';
import { DASH, fmtNum } from '../format.js';
import { html, type Html } from '../html.js';

/**
 * The Profile's energy: joules per sample and watts with the method in words, then every domain (RAPL per socket, each
 * GPU, the CPU estimate) with its counter's update period, ticks and idle watts; a NULL figure shows its reason.
 */
export function energyHtml(profile: StoredProfile): Html | null {
  const e = profile.energy;
  if (!e) return null;
  const figure = e.joules_per_sample === null ? 'not measured' : `${fmtJoules(e.joules_per_sample)} per sample`;
  const lead = html`<p><b>${figure}</b>${e.mean_watts === null ? '' : `, ${fmtNum(e.mean_watts)} W on average`}${e.method === null ? '' : ` · ${methodWords(e.method)}`}${e.reason ? html`. <span class="note">${e.reason}.</span>` : ''}</p>`;
  const rows = e.domains.map(
    (d) =>
      html`<tr><td>${d.name}${d.counted ? '' : html` <small class="sub">not counted</small>`}<td>${ENERGY_METHOD_WORDS[d.method]}<td>${fmtJoules(d.joules_per_sample)}<td>${fmtNum(d.mean_watts)}<td>${d.update_period_s === null ? DASH : `${fmtNum(d.update_period_s * 1000)} ms`}<td>${d.ticks ?? DASH}<td>${fmtNum(d.idle_watts)}<td>${d.reason ?? ''}</tr>`,
  );
  const table = rows.length
    ? html`<div class="table-wrap"><table><caption class="note">Per domain over every session. A counter with fewer than ${e.min_ticks} updates in a session is not reported as measured. Ticks are the counter's updates in the sessions (RAPL: at its period; the estimate: CPU clock ticks of the measured processes).</caption><thead><tr><th>Domain<th>Method<th>Per sample<th>Mean W<th>Update period<th>Ticks<th>Idle W<th>Note</tr></thead><tbody>${rows}</tbody></table></div>`
    : null;
  const tdp = e.tdp ? html`<p class="note">TDP: ${fmtNum(e.tdp.watts)} W over ${e.tdp.threads} logical CPUs (${fmtNum(e.tdp.watts_per_thread)} W each), from ${e.tdp.source === 'table' ? `the TDP table's ${e.tdp.entry}` : e.tdp.source === 'user' ? 'pbh run --tdp-w / energy.tdp_w' : e.tdp.entry ?? 'a default'}.</p>` : null;
  const idle = e.idle_baseline ? html`<p class="note">Idle baseline over ${fmtNum(e.idle_baseline.seconds)} s: ${e.idle_baseline.watts === null ? e.idle_baseline.reason : `${fmtNum(e.idle_baseline.watts)} W`}.</p>` : null;
  const missing = e.unavailable.length ? html`<p class="note">Not available here: ${e.unavailable.map((u, i) => html`${i ? '; ' : ''}${u.reader}: ${u.reason}`)}.</p>` : null;
  return html`<section id="energy"><h2>Energy</h2>${lead}${table}${tdp}${idle}${missing}</section>`;
}
