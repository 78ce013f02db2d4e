import { cellFingerprint, type Cell } from '../config/keys.js';
import type { StoredCell } from '../store/store.js';
import { modelFactsOnce, probeOnce, type SweepContext } from './context.js';

const short = (sha: string | null): string => (sha ? sha.slice(0, 12) : 'none');

/**
 * Why a cell stored ok must run again under --resume, or null when it is the same cell: its configuration (the
 * fingerprint), the model file's and the dataset's contents, and the engine's version as they are now against what
 * its newest ok Profile recorded. Anything that cannot be read now is a reason too: the run then records why.
 */
export async function staleBecause(ctx: SweepContext, cell: Cell, stored: StoredCell): Promise<string | null> {
  const exp = ctx.loaded.experiment;
  if (stored.fingerprint === null) return 'it was stored before PBH recorded each cell\'s whole configuration';
  if (stored.fingerprint !== cellFingerprint(exp, cell)) return 'its configuration changed (inputs, weights, scorers, tolerance, performance_samples or another setting outside the cell key)';
  if (ctx.dataset instanceof Error) return 'the dataset cannot be read now';
  if (stored.datasetSha256 !== ctx.dataset.manifestSha256) return `the dataset's files changed (manifest ${short(stored.datasetSha256)} -> ${short(ctx.dataset.manifestSha256)})`;
  const facts = await modelFactsOnce(ctx, cell.model).catch(() => null);
  if (!facts) return 'the model file cannot be read now';
  if (stored.modelSha256 !== facts.sha256) return `the model file changed (sha256 ${short(stored.modelSha256)} -> ${short(facts.sha256)})`;
  const engine = ctx.registry.engines.get(cell.engine.name);
  if (!engine) return `engine ${cell.engine.name} is not installed now`;
  const availability = await probeOnce(ctx, engine, cell.engine.process ?? engine.processes[0]!).catch(() => null);
  if (!availability?.available) return `engine ${cell.engine.name} is not available now`;
  if (availability.version !== stored.engineVersion) return `engine ${cell.engine.name} is ${availability.version} now, was ${stored.engineVersion ?? 'unknown'}`;
  return null;
}
