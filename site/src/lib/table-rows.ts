import { escapeXml } from '../charts/svg.js';
import { STATUS_TEXT, type ProfileEntry } from './data.js';
import { DASH, fmtDay, fmtNum, fmtPct } from './format.js';

const REASON_CHARS = 100;

/**
 * The leaderboard's body as HTML text. Written by hand because at a thousand rows every byte counts:
 * optional end tags (</td>, </tr>) are left out, as HTML allows. Every database string goes through
 * escapeXml; numbers are formatted here and carry nothing from the database but digits, and a latency
 * boundary is one of the contract's zod-checked enum values.
 */
export function profileRowsHtml(rows: ProfileEntry[], root: string, mixedBoundaries: boolean): string {
  const out: string[] = [];
  // Where the column heading cannot name one boundary, every latency names its own.
  const latency = (ms: number | null, p: ProfileEntry): string =>
    mixedBoundaries && ms !== null ? `${fmtNum(ms)} <small>${p.latency_boundary}</small>` : fmtNum(ms);
  for (const p of rows) {
    const head =
      `<td>${escapeXml(p.model_name)}<td>${escapeXml(p.engine_name)}<td>${escapeXml(p.engine_device)}<td>${p.batch_size}` +
      `<td>${escapeXml(p.precisionLabel ?? DASH)}<td>${escapeXml(p.hardware)}`;
    const tail = `<td>${fmtDay(p.created_at)}<td><a href="${root}profiles/${p.slug}.html">open</a>`;
    if (p.status === 'ok') {
      const memory = p.peak_device_mb ?? p.peak_rss_mb;
      out.push(
        `<tr><td>${p.rank_in_model ?? ''}${head}<td>${fmtNum(p.throughput_mean)}<td>${latency(p.p50_ms, p)}<td>${latency(p.p99_ms, p)}` +
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
