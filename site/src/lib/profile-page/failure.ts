import type { ProfileEntry } from '../data.js';
import { CAUSES, explainFailure, fixHtml } from '../explain.js';
import { html, type Html } from '../html.js';
import { statusHtml } from '../labels.js';
import type { Scrub } from '../scrub.js';

/** Why a Profile has no result, in words, with what to change (lib/explain.ts); nothing for an ok Profile. */
export function failureHtml(entry: ProfileEntry, scrub: Scrub, root: string): Html | null {
  const explained = explainFailure(entry, scrub);
  if (!explained) return null;
  const detail = entry.profile.error_detail !== null
    && html` The worker's stderr and the stack trace are in this Profile's <a href="${root}data/profiles/${entry.slug}.json.gz" download>JSON</a> (gzip) (<code>error_detail</code>), not on this page.`;
  return html`<section class="failure"><h2>Why there is no result</h2><p>${statusHtml(entry.status)} <strong class="cause">${CAUSES[explained.cause]}.</strong> ${explained.words}</p><p><strong>What to change:</strong> <span class="fix">${fixHtml(explained.fix)}</span></p><p class="note">The recorded message: <span class="error-text">${explained.message}</span>${detail}</p></section>`;
}
