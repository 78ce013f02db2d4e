import type { ProfileEntry } from '../data.js';
import { fmtNum } from '../format.js';
import { Html, html } from '../html.js';
import { BOUNDARIES, boundaryMeaning } from '../profile-view.js';

/**
 * The latency distribution: the headline boundary, the ECDF of every boundary (drawn by latencyEcdf), each boundary's statistics, and what
 * each boundary measures (once, under the table: a row's tooltip repeated it).
 */
export function latencyHtml(entry: ProfileEntry, ecdf: { svg: string } | null): Html {
  const profile = entry.profile;
  const headline = profile.headline_boundary;
  const note = headline
    ? html`Headline boundary: <code>${headline}</code> (${boundaryMeaning(headline)}). Throughput and the headline percentiles are computed from it.`
    : html`No headline boundary recorded (the Profile was stored before PBH recorded one, or nothing was measured): its figures are <code>${entry.latency_boundary}</code>'s, which it was ranked by.`;
  // The chart's markup comes from Plot through the DOM serialiser, which escaped every database string in it.
  const chart = ecdf
    ? html`<figure class="chart"><figcaption><strong>Latency per batch, every boundary</strong><span>One line a timing boundary; further right is slower.</span></figcaption>${new Html(ecdf.svg)}</figure>`
    : html`<p class="note">No per-batch samples were recorded for this Profile.</p>`;
  const rows = BOUNDARIES.flatMap((b) => {
    const s = profile.latency[b.key];
    if (!s) return [];
    const cells = [s.mean, s.std, s.min, s.p50, s.p90, s.p95, s.p99, s.max].map((ns) => html`<td>${fmtNum(ns / 1e6)}</td>`);
    return [html`<tr><td>${b.label}${b.key === headline && ' (headline)'}</td><td>${s.n}</td>${cells}</tr>`];
  });
  const table = rows.length > 0 && html`<div class="table-wrap"><table class="num"><caption class="note">Per-batch latency in milliseconds (percentiles by nearest rank, LoadGen's: the sample at index ⌊n·p⌋)</caption><thead><tr><th>Boundary</th><th>n</th><th>mean</th><th>std</th><th>min</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>max</th></tr></thead><tbody>${rows}</tbody></table></div>`;
  return html`<h2>Latency distribution</h2><p class="note">${note}</p>${chart}${table}<p class="note">What each boundary measures: <a href="../glossary.html#boundaries">Glossary</a>.</p>`;
}
