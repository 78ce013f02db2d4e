import type { ScenarioResult } from '@pbh/core';
import type { ProfileEntry } from '../data.js';
import { fmtCount, fmtNum } from '../format.js';
import { html, type Html } from '../html.js';
import { peakRate, SCENARIO_MEANING, scenarioRulesText } from '../profile-view.js';

const verdict = (validity: string): Html => html`<span class="verdict verdict-${validity.toLowerCase()}">${validity}</span>`;

function issueDelay(delay: NonNullable<ScenarioResult['issue_delay']>): Html {
  const ms = [delay.mean, delay.p50, delay.p90, delay.p99, delay.max].map((ns) => html`<td>${fmtNum(ns / 1e6)}</td>`);
  return html`<div class="table-wrap"><table class="num issue-delay"><caption class="note">Issue delay in milliseconds: how late queries were issued after their scheduled arrival (queued behind earlier ones, or a late executor)</caption><thead><tr><th>Queries</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr></thead><tbody><tr><td>${fmtCount(delay.n)}</td>${ms}</tr></tbody></table></div>`;
}

function peakSearch(tries: ScenarioResult['peak_search']): Html {
  const peak = peakRate(tries);
  const rows = tries.map((t, i) =>
    html`<tr><td>${i + 1}</td><td>${fmtNum(t.target_qps)}</td><td>${verdict(t.validity)}</td><td>${fmtNum(t.p99_ms)}</td><td class="text">${t.reasons.length === 0 ? '—' : t.reasons.join('; ')}</td></tr>`);
  return html`<h3>Peak search</h3><p class="note">LoadGen's FindPeakPerformance, bounded: each rate tried with its verdict.${peak === null ? ' No rate tried was VALID, so the sessions ran at the configured target rate.' : ` The sessions then ran at the highest VALID rate, ${fmtNum(peak)} queries/s.`}</p><div class="table-wrap"><table class="num peak-search"><thead><tr><th>Try</th><th>Target QPS</th><th>Verdict</th><th>p99 ms</th><th>Reasons</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The LoadGen scenario: its verdict and every reason, its rules, the reported figure, issue delay and peak search. */
export function scenarioHtml(entry: ProfileEntry): Html {
  const scenario = entry.profile.scenario;
  if (!scenario) {
    return html`<h2 id="scenario">Scenario</h2><p class="note">No scenario result: the cell ended before its scenario ran, or the Profile was stored before PBH judged scenarios. Workload scenario: ${entry.profile.workload.scenario}.</p>`;
  }
  const words = scenarioRulesText(scenario);
  const reasons = scenario.reasons.length > 0
    ? html`<p class="note">Why it is INVALID (${scenario.reasons.length} ${scenario.reasons.length === 1 ? 'reason' : 'reasons'}):</p><ul class="reasons">${scenario.reasons.map((r) => html`<li>${r}</li>`)}</ul>`
    : html`<p class="note">Every rule of the scenario was met in every session.</p>`;
  const early = scenario.early_stopping_ms === null
    ? 'no estimate'
    : `${fmtNum(scenario.early_stopping_ms)} ms`;
  const settings = Object.entries(scenario.settings).map(([name, value]) => `${name} ${String(value)}`).join(', ');
  return html`<h2 id="scenario">Scenario</h2><p>${verdict(scenario.validity)} <strong>${scenario.kind}</strong>: ${SCENARIO_MEANING[scenario.kind]}.</p>${reasons}<dl class="facts"><dt>Kind</dt><dd>${scenario.kind}</dd><dt>Rules</dt><dd>${scenario.rules}: ${words.rules}</dd><dt>Executor</dt><dd>${scenario.executor}: ${words.executor}</dd><dt>Reported</dt><dd><strong>${scenario.reported.name} = ${fmtNum(scenario.reported.value)} ${scenario.reported.unit}</strong> </dd><dt>Early stopping</dt><dd>${early} (<a href="../glossary.html#scenarios">how both are computed</a>)</dd><dt>Settings</dt><dd><code>${settings}</code></dd></dl>${scenario.issue_delay && issueDelay(scenario.issue_delay)}${scenario.peak_search.length > 0 && peakSearch(scenario.peak_search)}`;
}
