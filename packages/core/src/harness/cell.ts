import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { PreparedModel } from '../contracts/engine.js';
import type { Profile } from '../contracts/profile.js';
import type { Cell } from '../config/keys.js';
import { assembleProfile, blankProfile } from './assemble.js';
import type { SweepContext } from './context.js';
import type { Deadline } from './deadline.js';
import { recordFailure } from './failure.js';
import { runGenerateCell } from './generate/cell.js';
import { measureCell } from './measure.js';
import { planCell } from './plan.js';
import { prepareCell, recordEngine } from './prepare.js';
import { profileVerdicts } from '../publish/verdicts.js';
import { referenceOutputs, verifyCell } from './verify.js';

/**
 * Runs one cell to a Profile, in the phases of the paper's Algorithm 1: plan (validate, probe, analyse, fit) →
 * prepare (compile, outside any tracker) → verify (correctness gate, reference outputs) → measure (warmup, tracked
 * sessions, model-only bench, layers) → assemble. Never throws: every failure becomes a Profile with its status.
 */
export async function runCell(ctx: SweepContext, cell: Cell, deadline: Deadline): Promise<Profile> {
  const profile = blankProfile(ctx, cell);
  let prepared: PreparedModel | undefined;
  try {
    if (ctx.loaded.experiment.generate) {
      await runGenerateCell(ctx, cell, profile, deadline, (m) => (prepared = m));
      if (profile.status === 'ok') profile.verdicts = profileVerdicts(profile);
      return profile;
    }
    const plan = await planCell(ctx, cell, profile, deadline);
    ctx.onProgress?.({ kind: 'phase', phase: 'compile' });
    prepared = await prepareCell(plan, ctx.loaded.experiment.seed, deadline);
    recordEngine(profile, plan, prepared);
    await verifyCell(ctx, plan, prepared, profile, deadline);
    const references = await referenceOutputs(ctx, plan, deadline);
    const measured = await measureCell(ctx, plan, prepared, references, deadline);
    assembleProfile(ctx, plan, measured, profile);
  } catch (e) {
    recordFailure(profile, e, prepared);
  } finally {
    if (prepared) await prepared.dispose().catch(() => undefined);
    await rm(path.join(ctx.workRoot, cell.key), { recursive: true, force: true }).catch(() => undefined);
  }
  return profile;
}
