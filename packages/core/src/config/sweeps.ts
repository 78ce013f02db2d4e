import type { EngineEntry, Experiment, ScenarioConfig } from './schema.js';

/** Every request due at once: the concurrency cap alone sets the load (the site labels rates from 1e5 up as such). */
export const ALL_AT_ONCE_QPS = 1e6;

/** Why an engine entry's `sweep` cannot be expanded, with the entry's place in the config. */
export class SweepError extends Error {
  override name = 'SweepError';
}

const fmt = (x: number): string => String(Number(x.toPrecision(6)));

function baseScenario(entry: EngineEntry, exp: Experiment, where: string): Exclude<ScenarioConfig, string> {
  const scenario = entry.scenario ?? exp.scenario;
  const object = typeof scenario === 'string' ? { kind: scenario } : scenario;
  if (object.kind !== 'server') {
    throw new SweepError(`${where}.sweep: a sweep varies a server's load, and this entry's scenario is ${object.kind}: set scenario: {kind: server} on the entry (or at the top level), or remove sweep`);
  }
  return object;
}

/**
 * An engine entry with `sweep` becomes one entry per load point (every rate by every concurrency cap), each labelled
 * with its load and run as a Profile of its own in the same group, as if written out by hand: the site draws entries
 * that differ only in load as one line. Entries without `sweep` pass through unchanged.
 */
export function expandSweeps(exp: Experiment): Experiment {
  if (!exp.engines.some((e) => e.sweep)) return exp;
  // The labels each swept entry became, so an `exclude:` naming the entry as written drops all of its points.
  const pointsOf = new Map<string, string[]>();
  const engines = exp.engines.flatMap((entry, i): EngineEntry[] => {
    const { sweep, ...rest } = entry;
    if (!sweep) return [entry];
    const where = `engines[${i}]`;
    if (!sweep.target_qps && !sweep.max_concurrency) {
      throw new SweepError(`${where}.sweep: give target_qps (a list of rates) or max_concurrency (a list of caps), or both`);
    }
    const scenario = baseScenario(entry, exp, where);
    if (sweep.max_concurrency && !exp.generate) {
      throw new SweepError(`${where}.sweep.max_concurrency: the cap on requests in flight belongs to the generate workload; a batch cell's queries in flight are its engine's own option (onnxruntime: parallelRuns), one entry per value`);
    }
    if (scenario.find_peak && sweep.target_qps) {
      throw new SweepError(`${where}.sweep.target_qps: find_peak searches the rate itself; remove one of the two (a capacity search per cap: keep find_peak with sweep.max_concurrency)`);
    }
    if (scenario.find_peak && scenario.target_qps === undefined) {
      throw new SweepError(`${where}.scenario.target_qps: find_peak starts its search from a rate; set one (a rate the server surely meets)`);
    }
    const name = entry.label ?? entry.name;
    // A concurrency sweep with no rate anywhere sends every request at once: the cap is the load.
    const rates = sweep.target_qps ?? [scenario.target_qps ?? ALL_AT_ONCE_QPS];
    const caps = sweep.max_concurrency ?? [scenario.max_concurrency];
    const points = rates.flatMap((rate) =>
      caps.map((cap) => {
        const parts = [sweep.target_qps ? `${fmt(rate)} req/s` : null, sweep.max_concurrency ? `${cap} in flight` : null].filter((p): p is string => p !== null);
        return { ...rest, label: `${name} ${parts.join(', ')}`, scenario: { ...scenario, target_qps: rate, ...(cap === undefined ? {} : { max_concurrency: cap }) } };
      }),
    );
    pointsOf.set(name, [...(pointsOf.get(name) ?? []), ...points.map((p) => p.label)]);
    return points;
  });
  const exclude = exp.exclude.flatMap((x) => (x.engine !== undefined && pointsOf.has(x.engine) ? pointsOf.get(x.engine)!.map((engine) => ({ ...x, engine })) : [x]));
  return { ...exp, engines, exclude };
}
