/** A cell ran past its timeout_s; the Profile is stored with status "timeout". */
export class CellTimeoutError extends Error {
  override name = 'CellTimeoutError';
}

/** The user pressed Ctrl-C: the cell in flight is recorded as failed and the sweep stops. */
export class InterruptedError extends Error {
  override name = 'InterruptedError';
}

/** Outputs disagree with the reference engine beyond tolerance: stored as "invalid_output", never ranked. */
export class InvalidOutputError extends Error {
  override name = 'InvalidOutputError';
}

/** The engine is installed but cannot run here (runtime missing): stored as "skipped" with the fix. */
export class EngineUnavailableError extends Error {
  override name = 'EngineUnavailableError';
}

/** Attaches the worker's stderr tail (or other diagnostics) to whatever error a cell ended with. */
export function errorDetail(e: unknown): string | null {
  const err = e as { stderrTail?: string; stack?: string };
  const parts = [err.stderrTail ? `stderr (tail):\n${err.stderrTail}` : null, err.stack ?? null].filter(Boolean);
  return parts.length ? parts.join('\n\n') : null;
}

/** The config asks for something this cell cannot do (a bad batch size, option, precision or input); stored as "failed". */
export class CellConfigError extends Error {
  override name = 'CellConfigError';
}
