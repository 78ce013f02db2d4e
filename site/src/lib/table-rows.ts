import { escapeXml } from '../charts/svg.js';
import { STATUS_TEXT, type ProfileEntry } from './data.js';
import { fmtDay, fmtNum, fmtPct } from './format.js';

const REASON_CHARS = 100;

/**
 * The leaderboard's body as HTML text. Written by hand because at a thousand rows every byte counts:
 * optional end tags (</td>, </tr>) are left out, as HTML allows. Every database string goes through
 * escapeXml; numbers are formatted here and carry nothing from the database but digits.
 */
export function profileRowsHtml(rows: ProfileEntry[], root: string): string {
  const out: string[] = [];
  for (const p of rows) {
    const head = `<td>${escapeXml(p.model_name)}<td>${escapeXml(p.engine_name)}<td>${escapeXml(p.engine_device)}<td>${p.batch_size}<td>${escapeXml(p.hardware)}`;
    const tail = `<td>${fmtDay(p.created_at)}<td><a href="${root}profiles/${p.slug}.html">open</a>`;
    if (p.status === 'ok') {
      const memory = p.peak_device_mb ?? p.peak_rss_mb;
      out.push(
        `<tr><td>${p.rank_in_model ?? ''}${head}<td>${fmtNum(p.throughput_mean)}<td>${fmtNum(p.predict_p50_ms)}<td>${fmtNum(p.predict_p99_ms)}` +
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
