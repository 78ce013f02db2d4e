import type { PreparedModel } from '../contracts/engine.js';
import type { TensorMap } from '../contracts/tensor.js';
import type { Deadline } from './deadline.js';

/** Runs resident batch b and says how long the runtime's process measured it took, when the engine reports that. */
export type ResidentQuery = (batch: number) => Promise<{ engineNs?: bigint }>;

/**
 * Makes the performance set resident (LoadGen's LoadSamplesToRam) and returns the query that runs batch b: in the
 * runtime's process for engines that take resident samples, else predict() on the batch the harness holds. Then runs
 * the warmup queries, outside any tracker, and says how long the fastest took (a pace the offline scenario plans by).
 */
export async function residentQuery(
  model: PreparedModel,
  resident: TensorMap[],
  warmup: number,
  deadline: Deadline,
): Promise<{ query: ResidentQuery; warmupNsPerQuery: number }> {
  let query: ResidentQuery;
  if (model.loadResident && model.runResident) {
    await deadline.run(model.loadResident(resident));
    query = model.runResident.bind(model);
  } else {
    query = (b) => model.predict(resident[b]!);
  }
  // The fastest warmup query sets the pace: planning by it errs towards runs longer than asked, never shorter.
  let fastest = Infinity;
  for (let w = 0; w < warmup; w++) {
    const start = process.hrtime.bigint();
    await deadline.run(query(w % resident.length));
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - start));
  }
  return { query, warmupNsPerQuery: Number.isFinite(fastest) ? fastest : NaN };
}
