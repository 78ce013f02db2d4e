import type { GenerationResult, Stats } from '@pbh/core';
import * as Plot from '@observablehq/plot';
import { tickText } from '../charts/axes.js';
import { renderChart } from '../charts/render.js';
import { fmtNum } from './format.js';

const ms = (ns: number): number => ns / 1e6;

/** One row per distribution: what the quantile table under the charts prints, in ms. */
export function quantileRows(g: GenerationResult): string[][] {
  const row = (name: string, s: Stats): string[] => [name, String(s.n), ...[s.min, s.p50, s.p90, s.p99, s.max, s.mean].map((v) => fmtNum(ms(v)))];
  return [row('TTFT (arrival to first token)', g.ttft), row('ITL (each gap between tokens)', g.itl), row('TPOT (per request)', g.tpot), row('End to end', g.e2e)];
}

export const QUANTILE_COLUMNS = ['distribution', 'n', 'min ms', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'mean ms'];

/**
 * A histogram of one distribution (session 0's raw values, in ms) with its p50 and p99 as rules; a log x axis where
 * the values span more than 30x (a queued request's TTFT next to an idle one's).
 */
function histogram(id: string, title: string, valuesMs: number[], stats: Stats, what: string): string | null {
  if (valuesMs.length === 0) return null;
  const log = Math.min(...valuesMs) > 0 && Math.max(...valuesMs) / Math.min(...valuesMs) > 30;
  const rows = valuesMs.map((v) => ({ v }));
  const lo = Math.min(...valuesMs);
  const hi = Math.max(...valuesMs);
  // On a log axis the bins are equal in ratio, not in ms (a linear bin from 0 has no place on it).
  const thresholds = log ? Array.from({ length: 31 }, (_, i) => lo * (hi / lo) ** (i / 30) * (i === 30 ? 1.000001 : 1)) : 30;
  const p50 = ms(stats.p50);
  const p99 = ms(stats.p99);
  return renderChart({
    id,
    title,
    rows: rows.length,
    description:
      `Histogram of ${valuesMs.length} ${what} from session 1, in milliseconds${log ? ' on a log axis' : ''}; over every session ` +
      `p50 is ${fmtNum(p50)} ms and p99 ${fmtNum(p99)} ms (the two vertical rules).`,
    plot: {
      height: 230,
      marginBottom: 40,
      marginLeft: 50,
      x: { label: `${what} (ms${log ? ', log scale' : ''}) →`, type: log ? 'log' : 'linear', tickFormat: tickText },
      y: { label: '↑ Count', grid: true, nice: true, tickFormat: tickText },
      marks: [
        Plot.rectY(rows, { ...Plot.binX({ y: 'count' }, { x: 'v', thresholds }), fill: '#4269d0' }),
        Plot.ruleX([p50], { stroke: '#222', strokeDasharray: '4 2' }),
        Plot.ruleX([p99], { stroke: '#d62728', strokeDasharray: '4 2' }),
        // p50 to the left of its rule, p99 to the right: the two never overlap however close they are.
        Plot.text([{ x: p50, t: 'p50' }], { x: 'x', text: 't', frameAnchor: 'top', dy: -4, dx: -3, textAnchor: 'end' }),
        Plot.text([{ x: p99, t: 'p99' }], { x: 'x', text: 't', frameAnchor: 'top', dy: -4, dx: 3, textAnchor: 'start', fill: '#b3261e' }),
        Plot.ruleY([0]),
      ],
    },
  });
}

export function generationCharts(g: GenerationResult): { ttft: string | null; itl: string | null } {
  return {
    ttft: histogram('gen-ttft', 'Time to first token per request', g.per_request.map((r) => ms(r.ttft_ns)), g.ttft, 'time to first token'),
    itl: histogram('gen-itl', 'Inter-token latency', g.per_request.flatMap((r) => r.itl_ns.map(ms)), g.itl, 'inter-token gaps'),
  };
}
