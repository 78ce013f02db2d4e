import type { GenerationResult, GenerationTrace } from '../../contracts/generation.js';
import type { ScenarioResult } from '../../contracts/profile.js';
import type { TextDataset } from '../../dataset/text-dataset.js';
import { summarize } from '../../stats/summary.js';
import { CellConfigError } from '../errors.js';

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
 * A server's point judged: INVALID when the client sent any request later than its limit after it could go (the
 * run measured the client, not the server), else VALID; TTFT p99 is the reported figure, issue lateness beside it.
 */
export function servedVerdict(sessions: GenerationTrace[][], result: Pick<GenerationResult, 'scenario' | 'concurrency' | 'request_rate' | 'ttft'>): ServedVerdict | null {
  const traces = sessions.flat();
  if (traces.length === 0 || traces.some((t) => t.issue === undefined)) return null;
  const late = traces.map((t) => t.issue!.lateNs);
  const limitNs = traces[0]!.issue!.limitNs;
  const over = late.filter((ns) => ns > limitNs).length;
  const stats = summarize(late);
  const reasons = over
    ? [`the client sent ${over} of ${late.length} requests more than ${(limitNs / 1e6).toFixed(3)} ms after they could go (worst ${(stats.max / 1e6).toFixed(3)} ms): it could not keep the schedule, so the latencies are partly its own; lower the rate or concurrency, or raise late_ms`]
    : [];
  const counts = new Set(traces.map((t) => t.tokenCount ?? 'chunks'));
  const tokenCount = counts.has('chunks') ? 'chunks' : counts.has('server_usage') ? 'server_usage' : 'tokenizer';
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
