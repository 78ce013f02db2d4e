import type { Generator } from '../../contracts/engine.js';
import type { GenerationResult, GenerationSchedule, GenerationTrace } from '../../contracts/generation.js';
import type { ScenarioResult } from '../../contracts/profile.js';
import type { TextDataset } from '../../dataset/text-dataset.js';
import { summarize } from '../../stats/summary.js';
import { CellConfigError } from '../errors.js';
import { poissonArrivalsNs } from '../scenarios/schedule.js';
import { requestFigures } from './figures.js';

/** What a server (capability serve) is sent: the prompts' text, since its own tokenizer and chat template make its ids. */
export function promptTextsFor(serves: string, dataset: TextDataset, count: number): { promptTexts?: string[] } {
  if (serves !== 'server') return {};
  if (dataset.random || dataset.texts.length < count) {
    throw new CellConfigError(`dataset ${dataset.name} has ${dataset.random ? 'random ids' : `${dataset.texts.length} prompt texts for ${count} prompts`}: a server is sent prompt text; use dataset: {kind: text, prompts: FILE.jsonl} (or ShareGPT).`);
  }
  return { promptTexts: dataset.texts.slice(0, count) };
}

export interface ServedVerdict {
  tokenCount: GenerationResult['token_count'];
  issue: GenerationResult['issue'];
  scenario: ScenarioResult;
}

/**
 * A server's point (or a batching runtime's on a schedule) judged: INVALID when the client (the worker's loop) sent
 * any request later than its limit after it could go (the run measured the client, not the server), else VALID; TTFT p99 is the reported figure, issue lateness beside it.
 */
export function servedVerdict(sessions: GenerationTrace[][], result: Pick<GenerationResult, 'scenario' | 'concurrency' | 'request_rate' | 'ttft'>, serves: Generator['serves']): ServedVerdict | null {
  const traces = sessions.flat();
  if (traces.length === 0 || traces.some((t) => t.issue === undefined)) return null;
  const late = traces.map((t) => t.issue!.lateNs);
  // A batching runtime in the worker returns its token ids themselves: nothing was counted.
  const inProcess = serves !== 'server';
  const limitNs = traces[0]!.issue!.limitNs;
  const over = late.filter((ns) => ns > limitNs).length;
  const stats = summarize(late);
  const reasons = over
    ? [`${inProcess ? "the worker's loop added" : 'the client sent'} ${over} of ${late.length} requests more than ${(limitNs / 1e6).toFixed(3)} ms after they could go (worst ${(stats.max / 1e6).toFixed(3)} ms): it could not keep the schedule, so the latencies are partly its own; lower the rate or concurrency, or raise late_ms`]
    : [];
  const counts = new Set(traces.map((t) => t.tokenCount ?? 'chunks'));
  const tokenCount = inProcess ? null : counts.has('chunks') ? 'chunks' : counts.has('server_usage') ? 'server_usage' : 'tokenizer';
  return {
    tokenCount,
    issue: { limit_ns: limitNs, max_late_ns: stats.max, p99_late_ns: stats.p99, late_requests: over },
    scenario: {
      kind: result.scenario,
      rules: 'pbh',
      settings: { concurrency: result.concurrency, ...(result.request_rate === null ? {} : { request_rate: result.request_rate }), late_ms: limitNs / 1e6 },
      executor: 'runtime',
      validity: over ? 'INVALID' : 'VALID',
      reasons,
      reported: { name: 'ttft_p99', value: result.ttft.p99 / 1e6, unit: 'ms' },
      early_stopping_ms: null,
      issue_delay: stats,
      peak_search: [],
      mlperf: null,
    },
  };
}

export interface CapacityPoint {
  target_qps: number;
  validity: 'VALID' | 'INVALID';
  /** TTFT p99 at this rate, ms. */
  p99_ms: number;
  reasons: string[];
}

export interface CapacitySearch {
  schedule: Omit<GenerationSchedule, 'arrivalsNs'>;
  /** The first rate tried (the scenario's target_qps). */
  startQps: number;
  slo: { ttft_ms: number | null; itl_ms: number | null };
  seed: number;
  run(schedule: GenerationSchedule): Promise<GenerationTrace[]>;
}

/** One rate judged: the client kept its schedule, and TTFT p99 and TPOT p99 (LoadGen's nearest rank) met the SLOs. */
async function tryRate(s: CapacitySearch, qps: number): Promise<CapacityPoint> {
  const n = s.schedule.prompts.length;
  const traces = await s.run({ ...s.schedule, arrivalsNs: poissonArrivalsNs(n, qps, s.seed).slice(0, n) });
  const reqs = traces.map((t, i) => requestFigures(t, s.schedule.prompts[i]!.length));
  const ttft = summarize(reqs.map((r) => r.ttft_ns)).p99 / 1e6;
  const tpot = summarize(reqs.map((r) => (r.output_tokens > 1 ? (r.e2e_ns - r.ttft_ns) / (r.output_tokens - 1) : 0))).p99 / 1e6;
  const reasons: string[] = [];
  const late = traces.filter((t) => t.issue && t.issue.lateNs > t.issue.limitNs).length;
  if (late) reasons.push(`${late} requests issued past the client's lateness limit`);
  if (s.slo.ttft_ms !== null && ttft > s.slo.ttft_ms) reasons.push(`TTFT p99 ${ttft.toFixed(2)} ms > SLO ${s.slo.ttft_ms} ms`);
  if (s.slo.itl_ms !== null && tpot > s.slo.itl_ms) reasons.push(`TPOT p99 ${tpot.toFixed(2)} ms > SLO ${s.slo.itl_ms} ms`);
  return { target_qps: qps, validity: reasons.length ? 'INVALID' : 'VALID', p99_ms: ttft, reasons };
}

/**
 * The highest Poisson rate whose TTFT and TPOT p99 meet the SLOs with the client on schedule: from the start rate,
 * doubling (or halving, to a 16th of it) until the verdict flips, then bisecting to within 10%; every rate tried is
 * kept, in order.
 */
export async function searchCapacity(s: CapacitySearch, maxPoints = 12): Promise<{ points: CapacityPoint[]; rate: number | null }> {
  if (s.slo.ttft_ms === null && s.slo.itl_ms === null) {
    throw new CellConfigError('scenario {kind: server, find_peak: true} on a generate cell searches the highest rate that meets the SLOs: set generate.slo: {ttft_ms, itl_ms}.');
  }
  const points: CapacityPoint[] = [];
  const judge = async (qps: number): Promise<boolean> => {
    const p = await tryRate(s, qps);
    points.push(p);
    return p.validity === 'VALID';
  };
  let lo: number | null = null;
  let hi: number | null = null;
  let qps = s.startQps;
  // Halving stops at a 16th of the start rate: below that a session of the prompt set lasts too long to be worth it.
  while (points.length < maxPoints && (lo === null || hi === null) && qps >= s.startQps / 16) {
    if (await judge(qps)) lo = qps;
    else hi = qps;
    qps = hi === null ? qps * 2 : qps / 2;
  }
  while (lo !== null && hi !== null && hi / lo > 1.1 && points.length < maxPoints) {
    const mid = Math.sqrt(lo * hi);
    if (await judge(mid)) lo = mid;
    else hi = mid;
  }
  return { points, rate: lo };
}
