import type { Profile } from '../contracts/profile.js';
import { terminalSafe } from '../text/terminal.js';

export interface ProgressSink {
  cellStart(index: number, total: number, label: string): void;
  phase(phase: string): void;
  session(index: number, of: number): void;
  cellEnd(profile: Profile): void;
  done(): void;
}

function fmtDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

function outcome(p: Profile): string {
  return terminalSafe(outcomeText(p));
}

function outcomeText(p: Profile): string {
  if (p.status === 'ok') return `ok ${p.throughput?.mean.toFixed(1)} samples/s, p50 ${((p.latency[p.headline_boundary ?? 'predict']?.p50 ?? NaN) / 1e6).toFixed(3)} ms`;
  return `${p.status}: ${(p.error ?? '').split('\n')[0]}`;
}

/**
 * A live line on a TTY (cell, phase, session, ETA from the mean cell time so far); plain lines otherwise,
 * so logs and CI output stay readable.
 */
export function createProgress(stream: NodeJS.WriteStream = process.stderr): ProgressSink {
  const tty = stream.isTTY === true;
  const started = Date.now();
  let cell = { index: 0, total: 0, label: '', phase: '', session: '' };
  let finished = 0;
  const eta = (): string => (finished === 0 ? '?' : fmtDuration(((Date.now() - started) / finished) * (cell.total - finished)));
  const draw = (): void => {
    if (!tty) return;
    const line = `[${cell.index + 1}/${cell.total}] ${cell.label}  ${cell.phase}${cell.session}  ETA ${eta()}`;
    stream.write(`\r\x1b[2K${line.slice(0, (stream.columns ?? 120) - 1)}`);
  };
  return {
    cellStart(index, total, rawLabel) {
      // The label holds model and engine names from the config: shown escaped, never sent to the terminal raw.
      const label = terminalSafe(rawLabel);
      cell = { index, total, label, phase: '', session: '' };
      if (!tty) stream.write(`[${index + 1}/${total}] ${label} ...\n`);
      draw();
    },
    phase(phase) {
      cell.phase = phase;
      cell.session = '';
      draw();
    },
    session(index, of) {
      // Past the config's count the rounds go on until the interval is met or the budget spent: no fixed total.
      const n = index < of ? `${index + 1}/${of}` : `${index + 1}`;
      cell.session = ` session ${n}`;
      if (!tty) stream.write(`  session ${n}\n`);
      draw();
    },
    cellEnd(profile) {
      finished++;
      const line = `[${cell.index + 1}/${cell.total}] ${cell.label}: ${outcome(profile)}`;
      stream.write(tty ? `\r\x1b[2K${line}\n` : `  ${outcome(profile)}  (ETA ${eta()})\n`);
    },
    done() {
      if (tty) stream.write('\r\x1b[2K');
    },
  };
}
