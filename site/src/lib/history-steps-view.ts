import { fmtNum } from './format.js';
import type { SeriesStep } from './history.js';
import { STATUS_TEXT } from './labels.js';

/** How a change point reads in a table cell: the direction and size of a step, or the status transition. */
export function stepChangeText(step: SeriesStep): string {
  const c = step.change;
  if (c.kind === 'status') return `${STATUS_TEXT[c.from]} → ${STATUS_TEXT[c.to]}`;
  return `${c.direction === 'faster' ? '▲ faster' : '▼ slower'} ×${c.ratio.toFixed(3)}`;
}

export function stepIntervalText(step: SeriesStep): string {
  return step.change.kind === 'throughput' ? `[${step.change.low.toFixed(3)}, ${step.change.high.toFixed(3)}]` : '—';
}

export function stepPText(step: SeriesStep): string {
  if (step.change.kind !== 'throughput') return '—';
  const p = step.change.p;
  return p < 1e-4 ? p.toExponential(1) : p.toPrecision(2);
}

export function stepLevelsText(step: SeriesStep): string {
  const c = step.change;
  return c.kind === 'throughput' ? `${fmtNum(c.before.mean)} → ${fmtNum(c.after.mean)} (${c.before.points} → ${c.after.points} runs)` : '—';
}

/** The commit of the code, before → after where it changed; the engine version likewise. */
export function stepWhereText(step: SeriesStep): { commit: string; engine: string } {
  const short = (sha: string | null): string => (sha === null ? '?' : sha.slice(0, 10));
  const was = step.before.profile.profile.system.git_sha;
  const now = step.at.profile.profile.system.git_sha;
  const wasEngine = step.before.profile.engine_version;
  const nowEngine = step.at.profile.engine_version;
  return {
    commit: was === null && now === null ? '—' : was === now ? short(now) : `${short(was)} → ${short(now)}`,
    engine: wasEngine === nowEngine ? (nowEngine ?? '—') : `${wasEngine ?? '?'} → ${nowEngine ?? '?'}`,
  };
}
