import type { QuerySchedule, ScheduleTimings, SystemUnderTest } from '../../contracts/engine.js';
import type { MetricContext, MetricValue } from '../../contracts/metric.js';
import type { SessionResult } from '../../contracts/profile.js';
import { summarize } from '../../stats/summary.js';
import type { Deadline } from '../deadline.js';
import type { SessionInterference } from '../../system/interference.js';
import type { TrackedEnergy } from '../../energy/summary.js';
import type { PerformanceTracker } from '../tracker.js';
import { openSchedule } from './schedule.js';
import { mlperfJudgement, type ScenarioSettings } from './settings.js';
import { judge, loadgenPercentile, type ScenarioRun, type Verdict } from './validity.js';

export interface OpenLoopPlan {
  sut: SystemUnderTest;
  /** Queries the model runs at once (Capabilities.maxConcurrency). */
  maxConcurrency: number;
  /** Where the schedule is issued and timed: in a worker (the runtime's process), or the harness's. */
  executor: 'runtime' | 'harness';
  residentBatches: number;
  batchSize: number;
  /** Offline's expected samples/s (LoadGen's offline_expected_qps): the config's target_qps, else the warmup's pace. */
  expectedSamplesPerS: number;
  sessions: number;
  settings: ScenarioSettings;
  seed: number;
  tracker: PerformanceTracker;
  metricContext: MetricContext;
  deadline: Deadline;
  onSession?: (index: number) => void;
}

/** One server QPS tried by the peak search, with its verdict. */
export interface PeakTry {
  target_qps: number;
  validity: 'VALID' | 'INVALID';
  p99_ms: number;
  reasons: string[];
}

export interface OpenLoopResult {
  sessions: SessionResult[];
  metricValues: MetricValue[][];
  interference: SessionInterference[];
  energy: TrackedEnergy[];
  /** Per query latency in ns over every session, session-major. */
  queryNs: Float64Array;
  sessionOf: Int32Array;
  /** Per query, how late it was issued after its scheduled arrival (queued or a late executor), ns. */
  issueDelayNs: Float64Array;
  executor: 'runtime' | 'harness';
  verdicts: Verdict[];
  /** The same sessions judged by MLPerf's minimums. */
  mlperfVerdicts: Verdict[];
  peak: PeakTry[];
  /** The settings the sessions ran with (server: the rate the peak search found). */
  settings: ScenarioSettings;
}

function runOf(s: QuerySchedule, t: ScheduleTimings, settings: ScenarioSettings, batchSize: number): ScenarioRun & { latenciesNs: number[]; delays: number[] } {
  const latenciesNs = t.completedNs.map((c, i) => c - s.arrivalsNs[i]!);
  const delays = t.issuedNs.map((x, i) => Math.max(0, x - s.arrivalsNs[i]!));
  const allDone = Math.max(...t.completedNs);
  const durationNs = settings.kind === 'server' ? Math.max(...s.arrivalsNs) : allDone;
  return { latenciesNs, queries: s.batches.length, samples: s.batches.length * batchSize, durationNs, delays };
}

async function runOnce(plan: OpenLoopPlan, settings: ScenarioSettings, seed: number): Promise<{ schedule: QuerySchedule; timings: ScheduleTimings }> {
  const concurrency = Math.max(1, plan.maxConcurrency);
  const schedule = openSchedule(settings, plan.residentBatches, plan.batchSize, concurrency, seed, plan.expectedSamplesPerS);
  const timings = await plan.deadline.run(plan.sut.schedule(schedule));
  return { schedule, timings };
}

/**
 * LoadGen's FindPeakPerformance for server, bounded: from the configured target_qps, double while VALID (or halve
 * while INVALID, at most 4 times), then bisect between the highest VALID and the lowest INVALID rate to 5%; at most
 * 12 runs. Every try is kept with its verdict.
 */
async function findPeak(plan: OpenLoopPlan): Promise<{ qps: number; tries: PeakTry[] }> {
  const tries: PeakTry[] = [];
  const attempt = async (qps: number): Promise<boolean> => {
    const settings = { ...plan.settings, targetQps: qps };
    const { schedule, timings } = await runOnce(plan, settings, plan.seed + tries.length);
    const run = runOf(schedule, timings, settings, plan.batchSize);
    const v = judge(settings, run);
    tries.push({ target_qps: qps, validity: v.validity, p99_ms: loadgenPercentile(Float64Array.from(run.latenciesNs).sort(), 0.99) / 1e6, reasons: v.reasons });
    return v.validity === 'VALID';
  };
  let valid: number | undefined;
  let invalid: number | undefined;
  let qps = plan.settings.targetQps;
  while (tries.length < 6) {
    if (await attempt(qps)) {
      valid = qps;
      if (invalid !== undefined) break;
      qps *= 2;
    } else {
      invalid = qps;
      if (valid !== undefined || tries.length > 4) break;
      qps /= 2;
    }
  }
  while (valid !== undefined && invalid !== undefined && tries.length < 12 && invalid - valid > valid * 0.05) {
    const mid = (valid + invalid) / 2;
    if (await attempt(mid)) valid = mid;
    else invalid = mid;
  }
  return { qps: valid ?? plan.settings.targetQps, tries };
}

/**
 * Server and offline: each session runs one open schedule (Poisson arrivals at target_qps, or every sample at once),
 * by the system under test (in the runtime's process), inside the tracker.
 * A server peak search first picks the highest VALID rate, which the sessions then run.
 */
export async function runOpenLoop(plan: OpenLoopPlan): Promise<OpenLoopResult> {
  const peak = plan.settings.kind === 'server' && plan.settings.findPeak ? await findPeak(plan) : undefined;
  const settings = peak ? { ...plan.settings, targetQps: peak.qps } : plan.settings;
  const sessions: SessionResult[] = [];
  const metricValues: MetricValue[][] = [];
  const interference: SessionInterference[] = [];
  const energy: TrackedEnergy[] = [];
  const verdicts: Verdict[] = [];
  const mlperfVerdicts: Verdict[] = [];
  const queryNs: number[] = [];
  const sessionOf: number[] = [];
  const issueDelayNs: number[] = [];
  for (let s = 0; s < plan.sessions; s++) {
    plan.onSession?.(s);
    await plan.tracker.start(plan.metricContext);
    const { schedule, timings } = await runOnce(plan, settings, plan.seed + 1000 + s);
    const tracked = await plan.tracker.stop(plan.metricContext);
    metricValues.push(tracked.metrics);
    if (tracked.interference) interference.push(tracked.interference);
    if (tracked.energy) energy.push(tracked.energy);
    const run = runOf(schedule, timings, settings, plan.batchSize);
    verdicts.push(judge(settings, run));
    mlperfVerdicts.push(judge(mlperfJudgement(settings), run));
    for (const v of run.latenciesNs) {
      queryNs.push(v);
      sessionOf.push(s);
    }
    issueDelayNs.push(...run.delays);
    const wallNs = Math.max(...timings.completedNs);
    sessions.push({
      index: s,
      batches: run.queries,
      samples: run.samples,
      wall_ns: wallNs,
      throughput_sps: (run.samples * 1e9) / wallNs,
      latency: { query: summarize(run.latenciesNs) },
      metrics: Object.fromEntries(metricValues[s]!.map((v) => [v.name, v.value])),
    });
  }
  return {
    sessions,
    metricValues,
    interference,
    energy,
    queryNs: Float64Array.from(queryNs),
    sessionOf: Int32Array.from(sessionOf),
    issueDelayNs: Float64Array.from(issueDelayNs),
    executor: plan.executor,
    verdicts,
    mlperfVerdicts,
    peak: peak?.tries ?? [],
    settings,
  };
}
