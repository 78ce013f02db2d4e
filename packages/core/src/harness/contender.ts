import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { PreparedModel } from '../contracts/engine.js';
import type { Profile } from '../contracts/profile.js';
import type { TensorMap } from '../contracts/tensor.js';
import type { Cell } from '../config/keys.js';
import { assembleProfile, blankProfile } from './assemble.js';
import type { SweepContext } from './context.js';
import type { Deadline } from './deadline.js';
import { recordFailure } from './failure.js';
import { finishMeasure, openPerformance, openReplica, type OpenPerformance } from './measure.js';
import { planCell, type CellPlan } from './plan.js';
import { prepareCell, recordEngine } from './prepare.js';
import { referenceOutputs, verifyCell } from './verify.js';

/**
 * One cell of a group between its phases: planned, prepared, gated, its performance set resident and warmed up, so
 * the rounds can run its sessions between other contenders'. `done` once it has a final Profile (failed, or finished).
 */
export interface Contender {
  cell: Cell;
  profile: Profile;
  deadline: Deadline;
  plan: CellPlan | null;
  prepared: PreparedModel | null;
  references: TensorMap[];
  perf: OpenPerformance | null;
  /** Further prepared copies of the model whose sessions alternate with its own (rounds.replicas). */
  replicas: PreparedModel[];
  done: boolean;
}

/** Ends a contender on a failure: the Profile takes the status, the model is disposed and the cell's folder removed. */
export async function failContender(ctx: SweepContext, c: Contender, e: unknown): Promise<void> {
  recordFailure(c.profile, e, c.prepared ?? undefined);
  await release(ctx, c);
}

async function release(ctx: SweepContext, c: Contender): Promise<void> {
  c.done = true;
  if (c.prepared) await c.prepared.dispose().catch(() => undefined);
  c.prepared = null;
  for (const replica of c.replicas.splice(0)) await replica.dispose().catch(() => undefined);
  c.perf = null;
  await rm(path.join(ctx.workRoot, c.cell.key), { recursive: true, force: true }).catch(() => undefined);
}

/**
 * plan → prepare (outside any tracker) → verify (the correctness gate, reference outputs) → the performance set made
 * resident and warmed up, and as many more prepared copies as rounds.replicas asks (the same engine, options and
 * model: the gate has judged them). Never throws: a failure ends the contender with its Profile's status.
 */
export async function stageContender(ctx: SweepContext, cell: Cell, deadline: Deadline): Promise<Contender> {
  const c: Contender = { cell, profile: blankProfile(ctx, cell), deadline, plan: null, prepared: null, references: [], perf: null, replicas: [], done: false };
  try {
    const plan = await planCell(ctx, cell, c.profile, deadline);
    c.plan = plan;
    ctx.onProgress?.({ kind: 'phase', phase: 'compile' });
    c.prepared = await prepareCell(plan, ctx.loaded.experiment.seed, deadline);
    recordEngine(c.profile, plan, c.prepared);
    await verifyCell(ctx, plan, c.prepared, c.profile, deadline);
    c.references = await referenceOutputs(ctx, plan, deadline);
    c.perf = await openPerformance(ctx, plan, c.prepared, deadline);
    const stream = c.perf.stream;
    for (let r = 1; stream && r < ctx.loaded.experiment.rounds.replicas; r++) {
      // Its own scratch folder: an engine may write what it loads (a compiled library) there.
      const replica = await prepareCell({ ...plan, workDir: path.join(plan.workDir, `replica-${r}`) }, ctx.loaded.experiment.seed, deadline);
      c.replicas.push(replica);
      stream.addReplica(await openReplica(ctx, plan, replica, deadline));
    }
  } catch (e) {
    await failContender(ctx, c, e);
  }
  return c;
}

/** One tracked session of a stream contender; a failure ends it (and only it). True when the session ran. */
export async function contenderSession(ctx: SweepContext, c: Contender): Promise<boolean> {
  if (c.done || !c.perf?.stream) return false;
  try {
    await c.perf.stream.session();
    return true;
  } catch (e) {
    await failContender(ctx, c, e);
    return false;
  }
}

/** After the rounds: the transport probe, the accuracy pass, the probes and the assembled Profile; the model released. */
export async function finishContender(ctx: SweepContext, c: Contender): Promise<Profile> {
  if (c.done) return c.profile;
  try {
    const measured = await finishMeasure(ctx, c.plan!, c.prepared!, c.references, c.perf!, c.deadline);
    assembleProfile(ctx, c.plan!, measured, c.profile);
  } catch (e) {
    recordFailure(c.profile, e, c.prepared ?? undefined);
  }
  await release(ctx, c);
  return c.profile;
}
