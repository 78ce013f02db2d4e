/** Runs python/changepoints (ruptures' PELT) from the project venv over many series at once; JSON both ways, checked with zod. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { describePythonSearch, findProjectRoot, findVenvPython, VENV_FIX } from '../worker/venv.js';

/**
 * The penalty for one more change, as a multiple of sigma^2 ln n (BIC's is 2). Three times BIC's: on seeded flat
 * series of 50 points (5 sessions a point) 2 sigma^2 ln n put a step in 4% of them and 6 in 0.3%, while steps of
 * 3x the session noise were still all found within one point (python/changepoints, test/history).
 */
export const PENALTY_FACTOR = 6;
/** Points a segment needs at least: the two sides of a change each have a spread to test. */
export const MIN_SEGMENT = 2;

export interface SeriesValues {
  id: string;
  /** The level of each point in time order (a run's mean throughput). */
  values: number[];
  /** The least noise to assume between points (their own standard errors): figures equal to the last digit are not noiseless. */
  floor: number;
}

const DetectionSchema = z.object({
  library: z.string(),
  method: z.string(),
  series: z.array(z.object({ id: z.string(), breaks: z.array(z.number().int().nonnegative()), sigma: z.number(), penalty: z.number() })),
});
export type Detection = z.output<typeof DetectionSchema>;

/** Change points could not be computed (no venv, ruptures missing, the script failed): the message says what to run. */
export class ChangePointError extends Error {
  override name = 'ChangePointError';
}

function scriptRoot(root: string | undefined): string {
  const projectRoot = root ?? findProjectRoot();
  const dir = projectRoot ? path.join(projectRoot, 'python') : undefined;
  if (!dir || !existsSync(path.join(dir, 'changepoints', '__main__.py'))) {
    throw new ChangePointError(`the change-point script (python/changepoints) was not found above ${process.cwd()}; run pbh from the PBH project folder`);
  }
  return dir;
}

/** One Python process for every series: starting numpy and ruptures costs more than PELT on a few hundred points. */
export async function detectBreaks(series: readonly SeriesValues[]): Promise<Detection> {
  if (series.length === 0) return { library: 'ruptures', method: 'PELT, l2 cost', series: [] };
  const location = findVenvPython();
  if (!location) throw new ChangePointError(`change points run in the project's Python venv, and ${describePythonSearch()}. Fix: ${VENV_FIX}`);
  const input = JSON.stringify({ series, penalty_factor: PENALTY_FACTOR, min_size: MIN_SEGMENT });
  const result = await execa(location.python, ['-m', 'changepoints'], {
    env: { PYTHONPATH: scriptRoot(location.root), PYTHONDONTWRITEBYTECODE: '1' },
    input,
    reject: false,
    timeout: 300_000,
  });
  if (result.exitCode !== 0) {
    const detail = String(result.stderr).trim();
    const missing = /No module named '?(ruptures|numpy)/.exec(detail);
    const fix = missing ? ` Python module ${missing[1]} is missing from ${location.python}. Fix: ${VENV_FIX}` : '';
    throw new ChangePointError(`${location.python} -m changepoints failed (${result.shortMessage ?? `exit ${result.exitCode}`}).${fix}${detail ? `\n${detail.slice(-2000)}` : ''}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(String(result.stdout));
  } catch {
    throw new ChangePointError(`${location.python} -m changepoints printed something other than its JSON answer: ${String(result.stdout).slice(0, 200)}`);
  }
  const parsed = DetectionSchema.safeParse(json);
  if (!parsed.success) throw new ChangePointError(`${location.python} -m changepoints answered out of its schema: ${parsed.error.message}`);
  const ids = new Set(series.map((s) => s.id));
  if (parsed.data.series.length !== series.length || parsed.data.series.some((s) => !ids.has(s.id))) {
    throw new ChangePointError(`${location.python} -m changepoints answered for other series than it was sent (${parsed.data.series.length} of ${series.length})`);
  }
  return parsed.data;
}
