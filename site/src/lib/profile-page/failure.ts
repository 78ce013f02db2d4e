import type { ProfileEntry } from '../data.js';
import { CAUSES, explainFailure } from '../explain.js';
import { html, Html } from '../html.js';
import { STATUS_TEXT } from '../labels.js';
import type { Scrub } from '../scrub.js';

/** A fix's words with its `code` spans as <code>, everything else escaped. */
function fixHtml(fix: string): Html {
  return new Html(fix.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(/`([^`]+)`/g, '<code>$1</code>'));
}

/** Why a Profile has no result, in words, with what to change (lib/explain.ts); nothing for an ok Profile. */
export function failureHtml(entry: ProfileEntry, scrub: Scrub, root: string): Html | null {
  const explained = explainFailure(entry, scrub);
  if (!explained) return null;
  const detail = entry.profile.error_detail !== null
    && html` The worker's stderr and the stack trace are in this Profile's <a href="${root}data/profiles/${entry.slug}.json.gz" download>JSON</a> (gzip) (<code>error_detail</code>), not on this page.`;
  return html`<section class="failure"><h2>Why there is no result</h2><p><span class="status status-${entry.status}">${STATUS_TEXT[entry.status]}</span> <strong class="cause">${CAUSES[explained.cause]}.</strong> ${explained.words}</p><p><strong>What to change:</strong> <span class="fix">${fixHtml(explained.fix)}</span></p><p class="note">The recorded message: <span class="error-text">${explained.message}</span>${detail}</p></section>`;
}
