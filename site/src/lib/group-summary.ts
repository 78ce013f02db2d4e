import { costText, type AccuracyCost } from './accuracy.js';
import type { ProfileEntry } from './data.js';
import { escapeXml } from './escape.js';
import { fmtNum } from './format.js';
import { leadOf, ratioText } from './lead.js';

/**
 * The one answer a ranked group gives first: its fastest entry whatever the precision, with what that precision
 * costs in answers (points and samples); then each precision other than fp32 against fp32 on the same engine, with
 * the ratio's interval (lead.ts). Rows are in rank order (leaderboard.ts).
 */
export function groupAnswerHtml(rows: readonly ProfileEntry[], costs: ReadonlyMap<string, AccuracyCost>): string {
  const fastest = rows.find((p) => p.throughput_mean !== null);
  if (!fastest) return '';
  const precision = (p: ProfileEntry): string => p.precision ?? 'precision unknown';
  const cost = (p: ProfileEntry): string => {
    const c = costs.get(p.profile_id);
    if (c?.kind === 'reference') return ', the reference engine (its answers are what the others are scored against)';
    const text = c ? costText(c) : null;
    return text === null ? '' : `, ${c?.kind === 'agreement' ? 'agreement cost' : 'accuracy cost'} ${text}`;
  };
  const answer = `<span class="answer">Fastest: <b>${escapeXml(fastest.engine_entry)}</b> (${escapeXml(precision(fastest))}) ${fmtNum(fastest.throughput_mean)} samples/s${escapeXml(cost(fastest))}</span>`;
  // Precisions compared on one engine: bf16 on OpenVINO against fp32 on OpenVINO, never against another engine's fp32.
  const best = new Map<string, ProfileEntry>();
  for (const p of rows) {
    const key = `${p.engine_name}\u0000${precision(p)}`;
    if (p.throughput_mean !== null && !best.has(key)) best.set(key, p);
  }
  const compared = [...best.values()].flatMap((p) => {
    if (p.precision === 'fp32' || p.precision === null) return [];
    const base = best.get(`${p.engine_name}\u0000fp32`);
    const lead = base ? leadOf(p, base) : null;
    const against = base && lead ? ` = ${ratioText(lead)} its fp32 (${escapeXml(base.engine_entry)} ${fmtNum(base.throughput_mean)})` : ` (no fp32 on ${escapeXml(p.engine_name)} here to compare)`;
    return [`${escapeXml(precision(p))} on ${escapeXml(p.engine_name)}: ${escapeXml(p.engine_entry)} ${fmtNum(p.throughput_mean)}${against}`];
  });
  if (compared.length === 0) return ` ${answer}`;
  return ` ${answer} <span class="precisions">Precisions on the same engine: ${compared.join('; ')}</span>`;
}
