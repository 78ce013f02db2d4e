import { mkdir } from 'node:fs/promises';
import type { PreparedModel } from '../contracts/engine.js';
import type { Profile } from '../contracts/profile.js';
import type { Deadline } from './deadline.js';
import type { CellPlan } from './plan.js';

/** The prepare phase: the engine compiles or converts the model, timed by the engine as compile_ms, never tracked. */
export async function prepareCell(plan: CellPlan, seed: number, deadline: Deadline): Promise<PreparedModel> {
  await mkdir(plan.workDir, { recursive: true });
  return deadline.run(
    plan.engine.prepare({
      model: { name: plan.cell.model.name, path: plan.modelPath, workDir: plan.workDir },
      batchSize: plan.batchSize,
      device: plan.cell.engine.device,
      options: plan.options,
      inputs: plan.inputs,
      seed,
      precision: plan.precision.requested,
      signal: deadline.signal,
    }),
  );
}

/** What the prepared engine says about itself: compile time, facts, threads and the precision it executes. */
export function recordEngine(profile: Profile, plan: Pick<CellPlan, 'engine' | 'precision'>, model: PreparedModel): void {
  profile.engine.compile_ms = model.compileMs;
  profile.engine.facts = model.facts ?? {};
  profile.engine.process = model.pid ? 'worker' : 'harness';
  profile.workload.threads = model.threads ?? null;
  profile.engine.precision = {
    ...plan.precision,
    ...(model.precision ?? { executed: plan.precision.requested, evidence: `${plan.engine.name} does not report its precision; assumed as requested` }),
  };
}
