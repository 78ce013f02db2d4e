import { percentile } from '../../stats/summary.js';
import { earlyStoppingEstimate, serverEarlyStoppingPasses } from './early-stopping.js';
import type { ScenarioSettings } from './settings.js';

export interface ScenarioRun {
  /** Per query latency in ns (server: from its scheduled arrival, queueing included). */
  latenciesNs: ArrayLike<number>;
  queries: number;
  samples: number;
  /** LoadGen's duration test: last query issued (streams), last scheduled (server), all done (offline). */
  durationNs: number;
}

export interface Verdict {
  validity: 'VALID' | 'INVALID';
  reasons: string[];
  /** The scenario's figure: the percentile latency (streams, server) or samples/s (offline). */
  reported: { name: string; value: number; unit: string };
  /** LoadGen's early-stopping estimate of the reported percentile, ms (streams). */
  earlyStoppingMs: number | null;
}

/** LoadGen's percentile, the one every Profile figure uses (stats/summary.ts). */
export const loadgenPercentile = percentile;

const ms = (ns: number): number => ns / 1e6;
const fmt = (v: number): string => v.toPrecision(4);

/** LoadGen's validity rules for a scenario run: minimum duration, minimum queries (offline: samples), early stopping, the latency bound. */
export function judge(s: ScenarioSettings, run: ScenarioRun): Verdict {
  const sorted = Float64Array.from(run.latenciesNs).sort();
  const reasons: string[] = [];
  const rules = s.rules === 'mlperf' ? "MLPerf's rules" : "PBH's short rules (pbh run --mlperf for MLPerf's)";
  if (run.durationNs < s.minDurationMs * 1e6) {
    reasons.push(`ran ${fmt(run.durationNs / 1e9)} s; ${rules} need at least ${s.minDurationMs / 1000} s (min_duration_ms): ${s.kind === 'offline' ? 'raise performance_samples or target_qps' : s.kind === 'server' ? 'raise min_duration_ms or target_qps' : 'raise min_duration_ms'}`);
  }
  if (s.kind === 'offline') {
    if (run.samples < s.minSampleCount) reasons.push(`issued ${run.samples} samples; ${rules} need at least ${s.minSampleCount} in the offline query`);
  } else if (run.queries < s.minQueryCount) {
    reasons.push(`issued ${run.queries} queries; ${rules} need at least ${s.minQueryCount} (min_query_count): raise min_query_count or remove it`);
  }
  const pct = `p${Math.round(s.percentile * 100)}`;
  let earlyStoppingMs: number | null = null;
  let reported: Verdict['reported'];
  if (s.kind === 'offline') {
    reported = { name: 'samples_per_s', value: (run.samples * 1e9) / run.durationNs, unit: 'samples/s' };
  } else {
    const latency = loadgenPercentile(sorted, s.percentile);
    reported = { name: `${pct}_latency_ms`, value: ms(latency), unit: 'ms' };
    if (s.kind === 'server') {
      const boundNs = s.latencyBoundMs * 1e6;
      if (latency > boundNs) reasons.push(`${pct} latency ${fmt(ms(latency))} ms exceeds the latency bound ${s.latencyBoundMs} ms at ${s.targetQps} queries/s: lower target_qps`);
      const over = sorted.filter((v) => v > boundNs).length;
      const es = serverEarlyStoppingPasses(over, run.queries, s.percentile);
      if (!es.passes) reasons.push(`early stopping: ${over} of ${run.queries} queries over ${s.latencyBoundMs} ms; needs at least ${es.needed} queries for that to pass`);
    } else {
      const es = earlyStoppingEstimate(sorted, s.percentile);
      if (es.estimate === null) {
        reasons.push(`early stopping: ${run.queries} queries are too few to estimate ${pct}; needs at least ${es.needed}: remove min_query_count (PBH's default runs ${es.needed}) or raise it to ${es.needed}`);
      }
      else earlyStoppingMs = ms(es.estimate);
    }
  }
  return { validity: reasons.length ? 'INVALID' : 'VALID', reasons, reported, earlyStoppingMs };
}
