import type { Profile } from '../contracts/profile.js';
import { terminalSafe } from '../text/terminal.js';

/** A name this long is cut in the table (the Profile keeps it whole): one long name would push every column off screen. */
const MAX_CELL = 60;

function clip(cell: string): string {
  return cell.length > MAX_CELL ? `${cell.slice(0, MAX_CELL - 1)}…` : cell;
}

function table(header: string[], rawRows: string[][]): string {
  // Cells hold names and errors from configs and engines: escaped before measuring, so widths are what is shown.
  const rows = rawRows.map((row) => row.map((cell, i) => (i === row.length - 1 ? terminalSafe(cell) : clip(terminalSafe(cell)))));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The executed precision, with what was asked for when the runtime did something else. */
function precisionCell(p: NonNullable<Profile['engine']['precision']>): string {
  return p.executed === p.requested ? p.executed : `${p.executed} (asked ${p.requested})`;
}

/** A generate Profile's figures in its note: samples/s is then output tokens/s and p50/p99 a request's end to end. */
function generationNote(g: NonNullable<Profile['generation']>): string {
  const ms = (ns: number): string => (ns / 1e6).toFixed(2);
  const ppl = g.perplexity ? `, ppl ${g.perplexity.perplexity.toFixed(2)}` : '';
  const good = g.goodput_rps === null ? '' : `, goodput ${g.goodput_rps.toFixed(1)} req/s`;
  return `tokens/s; TTFT p50 ${ms(g.ttft.p50)} p99 ${ms(g.ttft.p99)} ms, ITL p50 ${ms(g.itl.p50)} p99 ${ms(g.itl.p99)} ms${good}${ppl}`;
}

/** The stored verdicts a reader should weigh the figure by, and how its rounds ended when not by the interval. */
function verdictMarks(p: Profile): string[] {
  const v = p.verdicts;
  const marks: string[] = [];
  if (v?.noisy) marks.push('noisy');
  if (v?.busy) marks.push('busy machine');
  const r = p.rounds;
  if (r?.stopped === 'budget' && r.ci_half_width !== null) marks.push(`budget spent at ±${(r.ci_half_width * 100).toFixed(1)}%`);
  if (r?.level_shifts?.length) marks.push(`${r.level_shifts.length} level shift${r.level_shifts.length > 1 ? 's' : ''}`);
  if (r?.lead) marks.push(r.lead.claim === 'fastest' ? `fastest, ${r.lead.ratio.toFixed(2)}x [${r.lead.ci95_low.toFixed(2)}, ${r.lead.ci95_high.toFixed(2)}]` : `tied with ${r.lead.runner_up}`);
  return marks;
}

/** The end-of-run table: one row per Profile (latencies at the headline boundary, as ranked), failures with their reason. */
export function formatSummary(profiles: Profile[]): string {
  const rows = profiles.map((p) => {
    const ms = (q: 'p50' | 'p99'): string => {
      const v = p.latency[p.headline_boundary ?? 'predict']?.[q];
      return v === undefined ? '' : (v / 1e6).toFixed(3);
    };
    const top1 = p.scores.find((s) => s.metric === 'top1');
    return [
      p.model_name,
      p.engine.label ?? p.engine.name,
      p.engine.precision ? precisionCell(p.engine.precision) : '',
      String(p.workload.batch_size),
      p.scenario ? `${p.scenario.kind} ${p.verdicts?.validity ?? p.scenario.validity}${p.scenario.rules === 'pbh' && p.verdicts?.mlperf_validity ? ` (MLPerf: ${p.verdicts.mlperf_validity})` : ''}` : (p.generation ? `${p.generation.scenario} (generate)` : ''),
      p.status,
      p.throughput ? p.throughput.mean.toFixed(1) : '',
      ms('p50'),
      ms('p99'),
      top1 ? `${(top1.value * 100).toFixed(1)}%` : '',
      p.metrics.peak_rss_mb !== undefined ? p.metrics.peak_rss_mb.toFixed(0) : '',
      p.status === 'ok' ? [...verdictMarks(p), ...(p.generation ? [generationNote(p.generation)] : [])].join('; ') : (p.error ?? '').split('\n')[0]!.slice(0, 80),
    ];
  });
  return table(['model', 'engine', 'precision', 'batch', 'scenario', 'status', 'samples/s', 'p50 ms', 'p99 ms', 'top1', 'rss MiB', 'note'], rows);
}
