import type { ProfileEntry } from '../data.js';
import { fmtBytes, fmtCount, fmtNum, fmtPct } from '../format.js';
import { html, Html } from '../html.js';
import { keyValueRows } from '../key-values.js';
import { machineSlug } from '../machines.js';
import { lastBatchText, processText } from '../profile-view.js';
import { splitConfig } from '../run-configs.js';
import { scrubCommand, type Scrub } from '../scrub.js';

/** Engine options and facts as a two-column table (key-values.ts), never raw JSON. */
function keyValues(value: unknown, scrub: Scrub, empty: string): Html {
  const rows = keyValueRows(value, scrub);
  if (rows.length === 0) return html`<span class="note">${empty}</span>`;
  return html`<table class="kv"><tbody>${rows.map((r) => html`<tr><th scope="row">${r.key}</th><td>${r.value}</td></tr>`)}</tbody></table>`;
}

const fact = (term: string, value: HtmlValue): Html => html`<dt>${term}</dt><dd>${value}</dd>`;
type HtmlValue = Html | string;

function precisionFact(precision: ProfileEntry['profile']['engine']['precision']): HtmlValue {
  if (!precision) return 'not recorded: the cell ended before a precision was resolved, or the Profile was stored before PBH recorded precision';
  return html`executed <strong>${precision.executed}</strong>, asked for ${precision.requested}, the model file's own ${precision.model}.${precision.executed !== precision.requested && ` The runtime did not execute the ${precision.requested} asked for.`} How the runtime said so: <q>${precision.evidence}</q>`;
}

function correctnessFact(correctness: NonNullable<ProfileEntry['profile']['correctness']>): Html {
  const outputs = correctness.outputs.map((o) => html`<tr><td>${o.name}</td><td>${o.max_abs_error.toExponential(2)}</td><td>${o.max_rel_error.toExponential(2)}</td><td>${o.passed ? 'passed' : 'FAILED'}</td></tr>`);
  return fact('Correctness', html`${correctness.passed ? 'passed' : 'FAILED'} against ${correctness.reference_engine}: max abs error ${correctness.max_abs_error.toExponential(2)}, max rel error ${correctness.max_rel_error.toExponential(2)} (atol ${correctness.atol}, rtol ${correctness.rtol}). Tolerance rule: ${correctness.tolerance_rule}.${outputs.length > 0 && html`<div class="table-wrap"><table class="num"><caption class="note">Each output compared on its own</caption><thead><tr><th>Output</th><th>max abs error</th><th>max rel error</th><th>Result</th></tr></thead><tbody>${outputs}</tbody></table></div>`}`);
}

/** Model, engine, dataset and workload: what was measured, how, and the correctness gate. */
function measuredHtml(entry: ProfileEntry, scrub: Scrub): Html {
  const { model, engine, dataset, workload, metrics, correctness } = entry.profile;
  const metricNames = Object.keys(metrics).sort();
  const modelFacts = model && html`${fact('Model file', html`<code>${scrub(model.path)}</code>, ${fmtBytes(model.size_bytes)}, sha256 <code>${model.sha256}</code>`)}${fact('Parameters / FLOPs', `${fmtCount(model.parameters)} parameters; ${model.flops_per_sample === null ? 'FLOPs unknown' : `${fmtNum(model.flops_per_sample / 1e6)} MFLOP per sample`}; opset ${model.opset ?? '—'}`)}${fact('Sparsity', `${model.sparsity.kind}${model.sparsity.kind === 'n_m' ? ` ${model.sparsity.n}:${model.sparsity.m}` : ''}, actual ${fmtPct(model.sparsity.actual)}${model.sparsity.target !== null ? `, target ${fmtPct(model.sparsity.target)}` : ''}${model.quantization ? `; quantization ${model.quantization}` : ''}`)}`;
  const scored = workload.last_batch === null
    ? "not recorded (see each score's own count)"
    : `${fmtCount(workload.samples_scored)} samples in the accuracy pass, ${lastBatchText(workload.last_batch)}`;
  return html`<h2>Model, engine, dataset, workload</h2><dl class="facts">${fact('Model', `${entry.model_name}${model ? ` (${model.family ?? 'unknown family'}, ${model.framework ?? 'unknown framework'}, ${model.weights} weights)` : ''}`)}${modelFacts}${
    fact('Engine', `${engine.name} ${engine.version ?? '(version unknown)'} on ${engine.device}${engine.label !== null ? `, config entry labelled ${engine.label}` : ''}`)}${
    fact('Precision', precisionFact(engine.precision))}${
    fact('Engine options', keyValues(engine.options, scrub, "none set: the engine's defaults"))}${
    fact('Engine facts', keyValues(engine.facts, scrub, 'none reported by the engine'))}${
    fact('Dataset', `${dataset.name} (${dataset.kind}, ${dataset.samples} samples${dataset.manifest_sha256 ? `, manifest sha256 ${dataset.manifest_sha256}` : ''})`)}${
    fact('Workload', `batch ${workload.batch_size}, ${workload.warmup_batches} warmup batches, ${workload.threads ?? '?'} threads, scenario ${workload.scenario}, seed ${workload.seed}`)}${
    fact('Samples', `timed: ${workload.sessions} sessions × ${fmtCount(workload.samples_per_session)} samples (the resident set, whole batches); scored: ${scored}`)}${
    fact('CPU and memory metrics', `measured in ${processText(engine.process)}${metricNames.length > 0 ? `: ${metricNames.map((name) => `${name} ${fmtNum(metrics[name])}`).join(', ')}` : ''}`)}${
    correctness && correctnessFact(correctness)}${fact('Cell key', html`<code>${entry.profile.cell_key}</code>`)}</dl>`;
}

/** The system in one paragraph: every fact of it, its CPU flags and every Profile measured on it are on Machines. */
function systemHtml(entry: ProfileEntry, root: string): Html {
  const s = entry.profile.system;
  const gpus = s.gpus.length === 0 ? 'no GPU' : s.gpus.map((g) => `${g.vendor} ${g.model}${g.vram_mb ? ` (${fmtNum(g.vram_mb)} MiB)` : ''}`).join(', ');
  return html`<h2>System</h2><p>${s.cpu_model.toLowerCase().startsWith(s.cpu_vendor.toLowerCase()) ? s.cpu_model : `${s.cpu_vendor} ${s.cpu_model}`}: ${s.cpu_cores} threads, ${s.cpu_physical_cores} physical cores, ${s.cpu_ghz} GHz; ${fmtBytes(s.memory_bytes)} memory; ${gpus}. ${s.os}, kernel ${s.kernel}, ${s.arch}, host ${s.hostname}; Node ${s.node_version}, Python ${s.python_version ?? '—'}, PBH ${s.harness_version}${s.git_sha ? ` (git ${s.git_sha})` : ''}.</p><p class="note">Its ${s.cpu_flags.split(' ').length} CPU flags (those that decide what an engine may execute, and every one), its peak FLOP/s and every Profile measured on this hardware: <a href="${root}machines.html#${machineSlug(entry.hardware)}">Machines</a>.</p>`;
}

/**
 * JSON in a <pre>: only `&` and `<` need escaping in element text, so its quotes stay quotes (Astro's `&quot;` made a
 * config half again as long).
 */
function jsonBlock(value: unknown, scrub: Scrub): Html {
  return new Html(`<pre>${scrub(JSON.stringify(value, null, 2)).replace(/[&<]/g, (c) => (c === '&' ? '&amp;' : '&lt;'))}</pre>`);
}

/** The reproduce command, the facts, the system and the Profile's own config; the run's config is on the run's page. */
export function factsHtml(entry: ProfileEntry, scrub: Scrub, root: string, runConfigHref: string): Html {
  const { cell } = splitConfig(entry.profile.config);
  const lines = cell === null ? 0 : JSON.stringify(cell, null, 2).split('\n').length;
  return html`<h2>Reproduce</h2><p>This exact command re-runs this one cell (same config, same cell key) into a database:</p><pre><code>${scrubCommand(entry.profile.command)}</code></pre><p class="note">Where to run it from and how paths read: <a href="${root}glossary.html#reproduce">Glossary</a>; the bundled models and data: <a href="${root}reproduce.html">Reproduce</a>.</p>${
    measuredHtml(entry, scrub)}${systemHtml(entry, root)}<h2>Full config</h2><details><summary>${cell === null ? 'This Profile recorded no cell of its own' : `This cell's model, engine and batch size, as PBH resolved them (${lines} lines)`}</summary>${cell !== null && jsonBlock(cell, scrub)}</details><p class="note">The rest of the run's experiment config (the same for every Profile of the run): <a href="${root}${runConfigHref}">${entry.run_name ?? entry.run_id}'s page</a>.</p>`;
}
