import type { PreparedModel } from '../contracts/engine.js';
import type { Profile } from '../contracts/profile.js';
import type { TensorMap } from '../contracts/tensor.js';
import type { SweepContext } from './context.js';
import { compareOutputs } from './correctness.js';
import type { Deadline } from './deadline.js';
import { InvalidOutputError } from './errors.js';
import type { CellPlan } from './plan.js';
import type { ReferenceKey } from './reference.js';
import { accuracyBatches } from './score.js';
import { argmaxAgreement, decodeHalves, toleranceFor, type Tolerance } from './tolerance.js';

function referenceKey(plan: CellPlan): ReferenceKey {
  return {
    modelPath: plan.modelPath,
    model: plan.cell.model,
    batchSize: plan.batchSize,
    feeder: plan.feeder,
    dataset: plan.dataset,
    inputs: plan.inputs,
    precision: plan.precision.model,
  };
}

/**
 * The correctness gate: every engine but the reference answers the first batch, every output compared with the
 * reference engine's within a tolerance that follows the executed precision. A wrong answer is never timed.
 */
export async function verifyCell(ctx: SweepContext, plan: CellPlan, model: PreparedModel, profile: Profile, deadline: Deadline): Promise<void> {
  const exp = ctx.loaded.experiment;
  if (plan.engine.name === exp.reference_engine) return;
  ctx.onProgress?.({ kind: 'phase', phase: 'verify' });
  const expected = await deadline.run(ctx.reference.rows(referenceKey(plan), 0, plan.batchSize));
  const got = await deadline.run(model.sut.infer(plan.firstBatch));
  const executed = profile.engine.precision?.executed ?? plan.precision.requested;
  const reference = decodeHalves(expected);
  const outputs = decodeHalves(got.outputs);
  const tol = toleranceFor(executed, exp.tolerance, reference, { quantization: plan.facts.quantization, precision: plan.precision.model });
  const cmp = compareOutputs(outputs, reference, tol.atol, tol.rtol);
  profile.correctness = {
    reference_engine: exp.reference_engine,
    max_abs_error: cmp.maxAbsError,
    max_rel_error: cmp.maxRelError,
    atol: tol.atol,
    rtol: tol.rtol,
    precision: tol.precision,
    tolerance_rule: `${tol.kind}: ${tol.rule}`,
    passed: cmp.passed,
    outputs: cmp.outputs.map((o) => ({ name: o.name, max_abs_error: o.maxAbsError, max_rel_error: o.maxRelError, passed: o.passed })),
  };
  if (!cmp.passed) {
    throw new InvalidOutputError(
      `outputs differ from ${exp.reference_engine} on the first batch: max abs error ${cmp.maxAbsError.toExponential(3)}, max rel error ${cmp.maxRelError.toExponential(3)} (atol ${tol.atol.toPrecision(3)}, rtol ${tol.rtol.toPrecision(3)}; ${tol.rule})${cmp.mismatch ? `: ${cmp.mismatch}` : ''}. ${likelyCause(cmp.outputs.filter((o) => !o.passed).map((o) => o.name), outputs, reference, tol)} Not timed: a wrong answer is not a speed result.`,
    );
  }
}

/** What most likely made the named outputs differ, from what the gate knows: the rule that applied and the decoded result. */
function likelyCause(failed: string[], outputs: TensorMap, reference: TensorMap, tol: Tolerance): string {
  const decoded = failed
    .map((name) => {
      const a = outputs[name] && reference[name] ? argmaxAgreement(outputs[name], reference[name]) : null;
      return a === null ? null : `output "${name}": argmax over the last axis agrees on ${(100 * a).toFixed(1)}% of rows`;
    })
    .filter((x): x is string => x !== null);
  const cause =
    tol.kind === 'quantized'
      ? 'Likely cause: beyond the rounding steps two runtimes may differ by, so an op the engine quantizes or dequantizes differently (per-channel scales, saturation, a zero point)'
      : tol.kind === 'reduced_precision'
        ? 'Likely cause: more reduced-precision rounding than the 8u budget allows (a deep or ill-conditioned graph), or a wrong kernel'
        : 'Likely cause: a wrong kernel or a wrong input (if the model is quantized but PBH did not detect it, set models[].optimization.quantization)';
  return `${cause}${decoded.length ? `; ${decoded.join('; ')}` : ''}.`;
}

/**
 * Reference outputs for scorers that compare against them, one per accuracy-pass batch, computed now, and the
 * reference engine released, so that neither its runs nor its idle thread pool and memory are inside measured sessions.
 */
export async function referenceOutputs(ctx: SweepContext, plan: CellPlan, deadline: Deadline): Promise<TensorMap[]> {
  const references: TensorMap[] = [];
  if (plan.scorers.some((s) => s.scorer.needsReference)) {
    for (const { start, rows } of accuracyBatches(plan.dataset.size, plan.batchSize)) {
      references.push(await deadline.run(ctx.reference.rows(referenceKey(plan), start, rows)));
    }
  }
  await ctx.reference.release();
  return references;
}
