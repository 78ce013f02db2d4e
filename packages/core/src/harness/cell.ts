import type { Profile } from '../contracts/profile.js';
import type { Cell } from '../config/keys.js';
import { blankProfile } from './assemble.js';
import type { SweepContext } from './context.js';
import type { Deadline } from './deadline.js';
import { recordFailure } from './failure.js';
import { runGenerateCell } from './generate/cell.js';
import { runGroup } from './group.js';
import { profileVerdicts } from '../publish/verdicts.js';
import type { PreparedModel } from '../contracts/engine.js';
import { rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Runs one cell to a Profile, in the phases of the paper's Algorithm 1: plan (validate, probe, analyse, fit) →
 * prepare (compile, outside any tracker) → verify (correctness gate, reference outputs) → measure (warmup, tracked
 * sessions, model-only bench, layers) → assemble. A group of one (harness/group.ts): its sessions still stop by
 * the interval within the budget. Never throws: every failure becomes a Profile with its status.
 */
export async function runCell(ctx: SweepContext, cell: Cell, deadline: Deadline): Promise<Profile> {
  if (ctx.loaded.experiment.generate) return runGenerate(ctx, cell, deadline);
  const [profile] = await runGroup(ctx, [cell], { deadlineFor: () => deadline });
  return profile!;
}

/** The generate workload (harness/generate/) runs its own phases, one cell at a time. */
export async function runGenerate(ctx: SweepContext, cell: Cell, deadline: Deadline): Promise<Profile> {
  const profile = blankProfile(ctx, cell);
  let prepared: PreparedModel | undefined;
  try {
    await runGenerateCell(ctx, cell, profile, deadline, (m) => (prepared = m));
    if (profile.status === 'ok') profile.verdicts = profileVerdicts(profile);
  } catch (e) {
    recordFailure(profile, e, prepared);
  } finally {
    if (prepared) await prepared.dispose().catch(() => undefined);
    await rm(path.join(ctx.workRoot, cell.key), { recursive: true, force: true }).catch(() => undefined);
  }
  return profile;
}
