import type { PreparedModel } from '../contracts/engine.js';
import type { Profile, ProfileStatus } from '../contracts/profile.js';
import { WorkerTimeoutError } from '../worker/errors.js';
import { CellTimeoutError, EngineUnavailableError, InterruptedError, InvalidOutputError, errorDetail } from './errors.js';

function statusOf(e: unknown): ProfileStatus {
  if (e instanceof CellTimeoutError || e instanceof WorkerTimeoutError) return 'timeout';
  if (e instanceof InvalidOutputError) return 'invalid_output';
  if (e instanceof EngineUnavailableError) return 'skipped';
  return 'failed';
}

/** Turns whatever ended a cell into the Profile's status and error, with what the engine's process last said. */
export function recordFailure(profile: Profile, e: unknown, prepared: PreparedModel | undefined): void {
  profile.status = statusOf(e);
  profile.error = e instanceof Error ? e.message : String(e);
  profile.error_detail = errorDetail(e);
  const said = prepared?.diagnostics();
  if (said && !profile.error.includes(said)) {
    profile.error_detail = [`engine process output (tail):\n${said}`, profile.error_detail].filter(Boolean).join('\n\n');
  }
  if (e instanceof InterruptedError) profile.error = `${profile.error}; the sweep stopped here`;
}
