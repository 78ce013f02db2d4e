import { costText, type AccuracyCost } from './accuracy.js';
import type { ProfileEntry } from './data.js';
import { escapeXml } from './escape.js';
import { fmtNum } from './format.js';

/**
 * The one answer a ranked group gives first: its fastest entry whatever the precision, with what that precision
 * costs in answers (points and samples); then, where the group holds several precisions, each precision's fastest
 * against the reference precision's (fp32 where present). Rows are in rank order (leaderboard.ts).
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
  const best = new Map<string, ProfileEntry>();
  for (const p of rows) if (p.throughput_mean !== null && !best.has(precision(p))) best.set(precision(p), p);
  if (best.size < 2) return ` ${answer}`;
  const base = best.get('fp32') ?? [...best.values()].at(-1)!;
  const compared = [...best.entries()].map(([name, p]) => {
    const ratio = p === base || base.throughput_mean === null || base.throughput_mean <= 0 ? '' : ` = ${fmtNum((p.throughput_mean ?? 0) / base.throughput_mean)}× ${escapeXml(precision(base))}`;
    return `${escapeXml(name)}: ${escapeXml(p.engine_entry)} ${fmtNum(p.throughput_mean)}${ratio}`;
  });
  return ` ${answer} <span class="precisions">Precisions, fastest of each: ${compared.join('; ')}</span>`;
}
