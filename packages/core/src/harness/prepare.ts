import { mkdir } from 'node:fs/promises';
import { z } from 'zod';
import type { PreparedModel } from '../contracts/engine.js';
import type { Profile } from '../contracts/profile.js';
import type { Deadline } from './deadline.js';
import type { CellPlan } from './plan.js';

/** The prepare phase: the engine compiles or converts the model, timed by the engine as compile_ms, never tracked. */
export async function prepareCell(plan: CellPlan, seed: number, deadline: Deadline): Promise<PreparedModel> {
  await mkdir(plan.workDir, { recursive: true });
  const model = await deadline.run(
    plan.engine.prepare({
      model: { name: plan.cell.model.name, path: plan.modelPath, workDir: plan.workDir },
      batchSize: plan.batchSize,
      device: plan.cell.engine.device,
      options: plan.options,
      process: plan.process,
      inputs: plan.inputs,
      seed,
      precision: plan.precision.requested,
      signal: deadline.signal,
    }),
  );
  try {
    checkPrepared(model, plan.engine.name);
  } catch (e) {
    await Promise.resolve(typeof model.dispose === 'function' ? model.dispose() : undefined).catch(() => undefined);
    throw e;
  }
  return model;
}

const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function');
const nullableFn = z.union([fn, z.null()]);
/** What contracts/engine.ts requires of a prepared model, checked once so a plugin's mistake is named, not a TypeError mid-session. */
const PreparedShape = z.looseObject({
  runsIn: z.object({ process: z.enum(['harness', 'worker']), binding: z.string(), pid: z.number().int() }),
  capabilities: z.object({ smallerBatch: z.boolean(), maxConcurrency: z.number().int().positive() }),
  library: z.looseObject({ load: fn, unload: fn }),
  sut: z.looseObject({ closedLoop: fn, schedule: fn, issue: fn, infer: fn }),
  probes: z.looseObject({ modelOnly: nullableFn, layers: nullableFn, memory: fn }),
  generator: z.union([z.looseObject({ generate: fn, scoreText: fn }), z.null()]),
  diagnostics: fn,
  dispose: fn,
});

function checkPrepared(model: PreparedModel, engine: string): void {
  const parsed = PreparedShape.safeParse(model);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(model)'}: ${i.message}`).join('; ');
    throw new Error(`engine ${engine}'s prepare() returned a model that does not meet PBH's engine contract (contracts/engine.ts: sample library, system under test, probes): ${issues}`);
  }
}

/** What the prepared engine says about itself: compile time, facts, threads and the precision it executes. */
export function recordEngine(profile: Profile, plan: Pick<CellPlan, 'engine' | 'precision'>, model: PreparedModel): void {
  profile.engine.compile_ms = model.compileMs;
  profile.engine.facts = model.facts;
  profile.engine.process = model.runsIn.process;
  profile.engine.binding = model.runsIn.binding;
  profile.workload.threads = model.threads;
  profile.engine.precision = {
    ...plan.precision,
    ...(model.precision ?? { executed: plan.precision.requested, evidence: `${plan.engine.name} does not report its precision; assumed as requested` }),
    weights: model.precision?.weights ?? null,
  };
}
