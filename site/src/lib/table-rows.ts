import { escapeXml } from './escape.js';
import { STATUS_TEXT, type ProfileEntry } from './data.js';
import { DASH, fmtDay, fmtNum, fmtPct } from './format.js';
import { verdictText } from './labels.js';

const REASON_CHARS = 100;

/**
 * The engine cell: the entry, and under it the engine's name where the entry is a label. data-v is what the table's
 * filter and sort read (client/table.ts), so the entry filters as itself, not run together with the name.
 */
function engineCell(p: ProfileEntry): string {
  const entry = escapeXml(p.engine_entry);
  return p.engine_entry === p.engine_name ? `<td>${entry}` : `<td data-v="${entry}">${entry} <small class="sub">${escapeXml(p.engine_name)}</small>`;
}

/** The precision cell: the executed precision, and under it the request where the runtime did something else. */
function precisionCell(p: ProfileEntry): string {
  if (p.precision === null || p.precisionLabel === null) return `<td>${DASH}`;
  if (p.precision_requested === null || p.precision_requested === p.precision) return `<td>${escapeXml(p.precisionLabel)}`;
  return `<td data-v="${escapeXml(p.precisionLabel)}">${escapeXml(p.precision)} <small class="sub">asked ${escapeXml(p.precision_requested)}</small>`;
}

/**
 * The scenario cell: the scenario, and its VALID/INVALID badge with the reported figure and every reason in the
 * tooltip (the Profile page lists them too), so the reasons cost the table no width.
 */
function scenarioCell(p: ProfileEntry): string {
  const scenario = escapeXml(p.scenario);
  const verdict = verdictText(p);
  if (p.validity === null || verdict === null) return `<td>${scenario}`;
  const validity = escapeXml(p.validity);
  return `<td data-v="${scenario}">${scenario} <span class="verdict verdict-${validity.toLowerCase()}" title="${escapeXml(verdict)}">${validity}</span>`;
}

/**
 * The leaderboard's body as HTML text. Written by hand because at a thousand rows every byte counts:
 * optional end tags (</td>, </tr>) are left out, as HTML allows. Every database string goes through
 * escapeXml, the contract's enum values (scenario, validity) too; numbers are formatted here and carry nothing from
 * the database but digits, and a latency boundary is one of the contract's zod-checked enum values.
 */
export function profileRowsHtml(rows: ProfileEntry[], root: string, mixedBoundaries: boolean): string {
  const out: string[] = [];
  // Where the column heading cannot name one boundary, every latency names its own.
  const latency = (ms: number | null, p: ProfileEntry): string =>
    mixedBoundaries && ms !== null ? `${fmtNum(ms)} <small class="sub">${p.latency_boundary}</small>` : fmtNum(ms);
  for (const p of rows) {
    const head =
      `<td>${escapeXml(p.model_name)}${engineCell(p)}<td>${escapeXml(p.engine_device)}<td>${p.batch_size}${scenarioCell(p)}` +
      `${precisionCell(p)}<td>${escapeXml(p.hardware)}`;
    // The date is the link to the Profile: one column fewer than a date and an "open" link side by side.
    const tail = `<td><a href="${root}profiles/${p.slug}.html">${fmtDay(p.created_at)}</a>`;
    if (p.status === 'ok') {
      const memory = p.peak_device_mb ?? p.peak_rss_mb;
      out.push(
        `<tr><td>${p.rank_in_group ?? ''}${head}<td>${fmtNum(p.throughput_mean)}<td>${latency(p.p50_ms, p)}<td>${latency(p.p99_ms, p)}` +
          `<td>${fmtPct(p.accuracy)}<td>${fmtNum(memory)}<td>${fmtPct(p.peak_fraction, 2)}${tail}`,
      );
    } else {
      const text = p.error ?? 'no reason recorded';
      const reason = text.length > REASON_CHARS ? `${text.slice(0, REASON_CHARS - 1)}…` : text;
      out.push(
        `<tr class="x"><td>${head}<td colspan="6"><span class="status status-${p.status}">${STATUS_TEXT[p.status]}</span> ${escapeXml(reason)}${tail}`,
      );
    }
  }
  return out.join('');
}
