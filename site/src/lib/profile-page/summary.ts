import { agreementWhy } from '../accuracy.js';
import type { ProfileEntry } from '../data.js';
import { statusHtml, verdictHtml } from '../labels.js';
import { fmtCount, fmtDate, fmtFlops, fmtMiB, fmtNum, fmtPct, fmtPeakFraction } from '../format.js';
import { html, type Html } from '../html.js';
import { busyOf, placeOf } from '../busy.js';
import { noiseOf } from '../noise.js';
import { runSlug } from '../run-configs.js';

/**
 * A Profile page is written as strings (lib/html.ts), one module a part of the page: at 10,000 Profiles Astro's
 * per-component and per-expression work was most of the pages' build time. Every value below is escaped by html``.
 */

/** A labelled entry names its engine too: the label says which entry, the name which runtime. */
export function profileTitle(entry: ProfileEntry): string {
  const engine = entry.engine_entry === entry.engine_name ? entry.engine_name : `${entry.engine_entry} (${entry.engine_name})`;
  return `${entry.model_name} · ${engine} · ${entry.engine_device} · batch ${entry.batch_size} · ${entry.scenario}`;
}

/** The heading, what the Profile is and where its model, engine, run and History series are. */
export function headHtml(entry: ProfileEntry, root: string): Html {
  const verdict = verdictHtml(entry.validity, root);
  return html`<h1>${profileTitle(entry)}</h1>
<p class="badges">Status <a href="${root}glossary.html#status">(did it produce a result)</a>: ${statusHtml(entry.status)}${verdict && html` · Verdict <a href="${root}glossary.html#verdict">(does it meet LoadGen's rules)</a>: ${verdict}`}</p>
<p class="lead">Profile <code>${entry.profile_id}</code>, measured ${fmtDate(entry.created_at)} in run <a href="${root}runs/${runSlug(entry.run_id)}.html">${entry.run_name ?? entry.run_id}</a>. Model page: <a href="${root}models/${entry.modelSlug}.html">${entry.model_name}</a>; engine page: <a href="${root}engines/${entry.engineSlug}.html">${entry.engine_name}</a>${entry.status === 'ok' && html`; history of this cell: <a href="${root}history/${entry.seriesSlug}.html">${entry.seriesKey}</a>`}.</p>`;
}

/** Predict − engine where transport was not its own boundary yet (Profiles stored before it was), as a difference of medians. */
function transport(entry: ProfileEntry): { ms: number; text: string } | null {
  const { latency } = entry.profile;
  if (latency.transport) return { ms: latency.transport.p50 / 1e6, text: 'transport p50: predict − engine per batch' };
  if (latency.predict && latency.engine) return { ms: (latency.predict.p50 - latency.engine.p50) / 1e6, text: 'predict p50 − engine p50 (no transport boundary recorded)' };
  return null;
}

function scoreText(entry: ProfileEntry, s: ProfileEntry['profile']['scores'][number]): string {
  if (s.metric === 'agreement' || s.metric.startsWith('agreement@')) return `${s.metric} on ${fmtCount(s.samples)} samples: ${agreementWhy(entry)}`;
  const chance = entry.profile.model?.weights === 'random' && /^top\d/.test(s.metric) ? ' (random weights: chance, not accuracy)' : '';
  return `${s.metric} on ${fmtCount(s.samples)} samples${chance}`;
}

const card = (value: string, text: string | Html, extra?: Html | false): Html => html`<div class="card"><b>${value}</b><span>${text}</span>${extra}</div>`;

/** The summary cards, and why the Profile is noisy where it is. */
export function summaryHtml(entry: ProfileEntry): Html {
  const profile = entry.profile;
  const { throughput, metrics } = profile;
  const precision = profile.engine.precision;
  const noise = noiseOf(entry);
  const busy = busyOf(entry);
  const door = placeOf(entry);
  const headline = entry.latency_boundary;
  const moved = transport(entry);
  const precisionText = precision
    ? `precision executed${precision.requested !== precision.executed ? `, not the ${precision.requested} asked for` : ''}`
    : 'precision not recorded';
  const cards = [
    card(fmtNum(throughput?.mean), `samples/s mean${throughput ? ` ± ${fmtNum(throughput.std)} (95% CI ${fmtNum(throughput.ci95_low)}–${fmtNum(throughput.ci95_high)})` : ''}`,
      html`${noise.noisy && html` <a class="noisy" href="#noise" title="${noise.brief}">noisy</a>`}${busy.busy && html` <a class="noisy busy" href="#busy" title="${busy.text}">busy</a>`}`),
    card(`${fmtNum(entry.p50_ms)} ms`, `p50 latency per batch (${headline}, the headline)`),
    card(`${fmtNum(entry.p99_ms)} ms`, `p99 latency per batch (${headline}, the headline)`),
    card(moved === null ? '—' : `${fmtNum(moved.ms)} ms`, moved?.text ?? 'transport: not measured'),
    card(precision?.executed ?? '—', precisionText),
    card(profile.engine.process ?? '—', door ? `runs ${door}` : 'where the model ran: not recorded'),
    ...profile.scores.map((s) => card(s.higher_is_better ? fmtPct(s.value) : fmtNum(s.value), scoreText(entry, s))),
    card(fmtMiB(metrics.peak_rss_mb ?? null), `peak RSS of the ${profile.engine.process ?? "model's"} process${metrics.peak_device_mb !== undefined ? `; device ${fmtMiB(metrics.peak_device_mb)}` : ''}`),
    card(fmtFlops(profile.achieved_flops), `achieved, ${fmtPeakFraction(profile.peak_fraction, 2)} of ${profile.peak?.precision ?? 'fp32'} peak`),
    card(profile.engine.compile_ms === null ? '—' : `${fmtNum(profile.engine.compile_ms)} ms`, 'prepare / compile (outside the timed loop)'),
  ];
  return html`<h2>Summary</h2><div class="cards">${cards}</div>${noise.noisy && html`<section id="noise" class="noise-note"><p><span class="noisy">noisy</span> This Profile's throughput is too uncertain to compare closely with another's:</p><ul>${noise.reasons.map((r) => html`<li>${r}</li>`)}</ul><p class="note">The rule, the same on every page: <a href="../glossary.html#noisy">Glossary</a>.</p></section>`}${busy.busy && html`<section id="busy" class="noise-note"><p><span class="noisy busy">busy</span> ${busy.text}: the figure is this machine's under that load, not the engine's alone.</p><p class="note">Per session: ${profile.interference!.sessions.map((s) => `${s.index + 1}: ${fmtPct(s.other_cpu_share, 0)}`).join(', ')}. The rule: <a href="../glossary.html#busy">Glossary</a>.</p></section>`}`;
}
