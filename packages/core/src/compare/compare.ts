import { cellLabel } from '../history/series.js';
import type { HistoryPoint } from '../history/points.js';
import { NOISE_MAX_CI_HALF_WIDTH, NOISE_MIN_SESSION_MS } from '../publish/noise.js';
import { ratioInterval } from '../stats/welch.js';

export type Verdict = 'faster' | 'slower' | 'no change' | 'not comparable';

/** One side of a cell: the Profile compared and what may make its figure untrustworthy. */
export interface CompareSide {
  profile_id: string;
  run_id: string;
  git_sha: string | null;
  status: HistoryPoint['status'];
  throughput: number | null;
  sessions: number;
  hardware: string;
  engine_version: string | null;
  noisy: boolean;
  busy: boolean | null;
}

export interface CompareRow {
  cell_key: string;
  cell: string;
  baseline: CompareSide | null;
  candidate: CompareSide | null;
  /** candidate / baseline throughput (above 1: faster), with its 95% interval from the sessions (core's ratioInterval). */
  ratio: number | null;
  ci95_low: number | null;
  ci95_high: number | null;
  p: number | null;
  verdict: Verdict;
  /** Why this verdict, in one sentence. */
  why: string;
  /** What makes the figure less trustworthy (noisy, busy machine): a verdict is never given without them. */
  caveats: string[];
  /** What --fail-on regression counts: slower, or ok in the baseline and not ok in the candidate. */
  regression: boolean;
}

export interface CompareOptions {
  /** A change counts when the ratio is beyond this factor (asv's --factor): 1.1 = 10% slower or faster. */
  threshold: number;
}

const fmtPct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function sideOf(p: HistoryPoint): CompareSide {
  return {
    profile_id: p.profile_id,
    run_id: p.run_id,
    git_sha: p.git_sha,
    status: p.status,
    throughput: p.throughput,
    sessions: p.sessions.length,
    hardware: p.hardware,
    engine_version: p.engine_version,
    noisy: p.noisy,
    busy: p.busy,
  };
}

function caveatsOf(name: 'baseline' | 'candidate', p: HistoryPoint): string[] {
  if (p.status !== 'ok') return [];
  const out: string[] = [];
  // The stored verdict (judged once at assembly); the figures say why.
  if (p.noisy && p.short_session_ms !== null) out.push(`${name} noisy: a session of ${p.short_session_ms.toFixed(0)} ms, under ${NOISE_MIN_SESSION_MS} ms`);
  if (p.noisy && p.ci_half_width !== null && p.ci_half_width > NOISE_MAX_CI_HALF_WIDTH) {
    out.push(`${name} noisy: 95% CI ±${fmtPct(p.ci_half_width)} of the mean, wider than ±${NOISE_MAX_CI_HALF_WIDTH * 100}%`);
  }
  if (p.busy === true) out.push(`${name} measured on a busy machine (other processes' CPU share over the threshold)`);
  return out;
}

/** The Profile a side stands on for a cell: the newest ok one, else the newest of any status. */
export function pickPerCell(points: readonly HistoryPoint[]): Map<string, HistoryPoint> {
  const out = new Map<string, HistoryPoint>();
  for (const p of points) {
    const held = out.get(p.cell_key);
    const better = !held || (p.status === 'ok') > (held.status === 'ok') || ((p.status === 'ok') === (held.status === 'ok') && p.created_at >= held.created_at);
    if (better) out.set(p.cell_key, p);
  }
  return out;
}

function judge(b: HistoryPoint, c: HistoryPoint, options: CompareOptions): Pick<CompareRow, 'ratio' | 'ci95_low' | 'ci95_high' | 'p' | 'verdict' | 'why' | 'regression'> {
  const none = { ratio: null, ci95_low: null, ci95_high: null, p: null, verdict: 'not comparable' as const };
  if (b.status !== 'ok' || c.status !== 'ok') {
    const failed = (name: string, p: HistoryPoint): string => `${name} is ${p.status}${p.error ? ` (${p.error.split('\n')[0]!.slice(0, 120)})` : ''}`;
    const why = [b.status !== 'ok' ? failed('baseline', b) : '', c.status !== 'ok' ? failed('candidate', c) : ''].filter(Boolean).join('; ');
    return { ...none, why, regression: b.status === 'ok' && c.status !== 'ok' };
  }
  if (b.hardware !== c.hardware) return { ...none, why: `measured on different hardware: ${b.hardware} vs ${c.hardware}`, regression: false };
  const interval = ratioInterval(b.sessions, c.sessions);
  if (!interval) {
    const few = b.sessions.length < 2 ? 'baseline' : 'candidate';
    return { ...none, why: `the ${few} has fewer than 2 sessions, so its figure has no interval (run with sessions: 2 or more)`, regression: false };
  }
  const figures = { ratio: interval.ratio, ci95_low: interval.low, ci95_high: interval.high, p: interval.p };
  const limit = options.threshold;
  if (interval.ratio < 1 / limit && interval.high < 1) {
    return { ...figures, verdict: 'slower', why: `throughput ×${interval.ratio.toFixed(3)}, beyond the ×${(1 / limit).toFixed(3)} threshold, and its 95% CI leaves out 1`, regression: true };
  }
  if (interval.ratio > limit && interval.low > 1) {
    return { ...figures, verdict: 'faster', why: `throughput ×${interval.ratio.toFixed(3)}, beyond the ×${limit.toFixed(3)} threshold, and its 95% CI leaves out 1`, regression: false };
  }
  const why = interval.low <= 1 && interval.high >= 1
    ? `the 95% CI [${interval.low.toFixed(3)}, ${interval.high.toFixed(3)}] includes 1`
    : `×${interval.ratio.toFixed(3)} is within the threshold (×${(1 / limit).toFixed(3)} to ×${limit.toFixed(3)})`;
  return { ...figures, verdict: 'no change', why, regression: false };
}

/** Every cell key of either side, matched by key, judged by the sessions' throughputs. */
export function compareSides(baseline: readonly HistoryPoint[], candidate: readonly HistoryPoint[], options: CompareOptions): CompareRow[] {
  const base = pickPerCell(baseline);
  const cand = pickPerCell(candidate);
  const keys = [...new Set([...base.keys(), ...cand.keys()])];
  const rows = keys.map((key): CompareRow => {
    const b = base.get(key);
    const c = cand.get(key);
    const cell = cellLabel((c?.precision ? c : b) ?? c!);
    if (!b || !c) {
      return {
        cell_key: key, cell, baseline: b ? sideOf(b) : null, candidate: c ? sideOf(c) : null,
        ratio: null, ci95_low: null, ci95_high: null, p: null, verdict: 'not comparable',
        why: b ? 'only in the baseline' : 'only in the candidate', caveats: [], regression: false,
      };
    }
    return { cell_key: key, cell, baseline: sideOf(b), candidate: sideOf(c), ...judge(b, c, options), caveats: [...caveatsOf('baseline', b), ...caveatsOf('candidate', c)] };
  });
  return rows.sort((a, b) => a.cell.localeCompare(b.cell) || a.cell_key.localeCompare(b.cell_key));
}
