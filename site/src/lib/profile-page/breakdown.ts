import type { ProfileEntry } from '../data.js';
import { fmtFlops, fmtNum, fmtPct, fmtPeakFraction } from '../format.js';
import { html, type Html } from '../html.js';
import { meterValue, opTypeShares, TOP_LAYERS } from '../profile-view.js';

/** A bar from zero: its value to four significant digits (a bar cannot show more), the figure beside it as read. */
const bar = (value: number, max?: number, wide = false): Html =>
  html`<meter class="bar${wide ? ' wide' : ''}" value="${meterValue(value)}"${max !== undefined && html` max="${meterValue(max)}"`}></meter>`;

const ms = (ns: number | undefined): number | null => (ns === undefined ? null : ns / 1e6);

function sessionsHtml(entry: ProfileEntry): Html {
  const { sessions, throughput } = entry.profile;
  if (sessions.length === 0) return html`<h2>Stability across sessions</h2><p class="note">No sessions were measured.</p>`;
  const headline = entry.latency_boundary;
  const fastest = Math.max(0, ...sessions.map((s) => s.throughput_sps));
  const rows = sessions.map((s) =>
    html`<tr><td>${s.index + 1}</td><td>${s.batches}</td><td>${s.samples}</td><td>${fmtNum(s.wall_ns / 1e9)}</td><td>${bar(s.throughput_sps, fastest)} ${fmtNum(s.throughput_sps)}</td><td>${fmtNum(ms(s.latency[headline]?.p50))}</td><td>${fmtNum(ms(s.latency[headline]?.p99))}</td></tr>`);
  return html`<h2>Stability across sessions</h2><div class="table-wrap"><table class="num" data-table="sessions"><caption class="note">The spread between <a href="../glossary.html#sessions">sessions</a> is the run-to-run noise.${throughput && ` Mean ${fmtNum(throughput.mean)} samples/s.`} Bars from zero to the fastest.</caption><thead><tr><th>Session</th><th>Batches</th><th>Samples</th><th>Wall (s)</th><th>Throughput (samples/s)</th><th>p50 ms (${headline})</th><th>p99 ms (${headline})</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function layersHtml(entry: ProfileEntry): Html {
  const profile = entry.profile;
  const top = [...profile.layers].sort((a, b) => b.share - a.share).slice(0, TOP_LAYERS);
  if (top.length === 0) return html`<h2>Per-layer breakdown</h2><p class="note">No per-layer timings: the engine has no profiler hook, or the cell did not run.</p>`;
  const layers = top.map((l) => html`<tr><td>${l.name}</td><td>${l.op_type}</td><td>${fmtNum(l.mean_ns / 1e3)}</td><td>${l.calls}</td><td>${bar(l.share)} ${fmtPct(l.share)}</td></tr>`);
  const ops = opTypeShares(profile).map((o) => html`<tr><td>${o.op}</td><td>${o.layers}</td><td>${bar(o.share)} ${fmtPct(o.share)}</td></tr>`);
  return html`<h2>Per-layer breakdown</h2><div class="grid2"><div class="table-wrap"><table class="num" data-table="layers"><caption class="note">Where the time goes: top ${top.length} of ${profile.layers.length} layers by share of the runtime's per-layer time, from the engine's own profiler</caption><thead><tr><th>Layer</th><th>Op</th><th>Mean (µs)</th><th>Calls</th><th>Share</th></tr></thead><tbody>${layers}</tbody></table></div><div class="table-wrap"><table class="num" data-table="op-types"><caption class="note">Time per op type</caption><thead><tr><th>Op type</th><th>Layers</th><th>Share</th></tr></thead><tbody>${ops}</tbody></table></div></div>`;
}

function flopsHtml(entry: ProfileEntry, root: string): Html {
  const { achieved_flops: achieved, peak_fraction: fraction, system, model } = entry.profile;
  if (achieved === null || system.peak_flops === null) {
    return html`<h2>Achieved vs peak FLOP/s</h2><p class="note">Not available: ${achieved === null ? "the model's FLOPs or the throughput are unknown" : 'the hardware peak is unknown'}. Peak formula: ${system.peak_flops_formula}</p>`;
  }
  const perSample = fmtNum(model?.flops_per_sample ? model.flops_per_sample / 1e6 : null);
  // The general rule is the Glossary's; the page keeps this machine's own figures ("…; here 2 x 2.4 GHz … x 32 (avx2+fma)").
  // Profiles since issue 34 carry the executed precision's peak; older ones were judged against fp32's.
  const peak = entry.profile.peak ?? { precision: 'fp32', ops_per_s: system.peak_flops, formula: system.peak_flops_formula.split('; here ')[1] ?? system.peak_flops_formula };
  const under = fraction !== null && fraction > 1
    ? html` <strong>Peak underestimated</strong>: a fraction above 100% means the clock or unit width the peak assumes is below what ran (a VM hides its turbo clock), not that the peak was beaten.`
    : '';
  return html`<h2>Achieved vs peak FLOP/s</h2><p data-figure="flops">${bar(achieved, peak.ops_per_s, true)} achieved <strong>${fmtFlops(achieved)}</strong>, ${fmtPeakFraction(fraction, 2)} of the theoretical ${peak.precision} peak of ${fmtFlops(peak.ops_per_s)}.${under} <span class="note">Achieved = FLOPs (and integer OPs) per sample × throughput (${perSample} MFLOP per sample); peak = ${peak.formula} (<a href="${root}glossary.html#flops">the rule</a>).</span></p>`;
}

/** Sessions, layers and FLOP/s: tables with a <meter> bar per row, not charts (a Plot chart costs ~7 ms and ~4 KB a page). */
export function breakdownHtml(entry: ProfileEntry, root: string): Html {
  return html`${sessionsHtml(entry)}${layersHtml(entry)}${flopsHtml(entry, root)}`;
}
