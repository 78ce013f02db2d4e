import type { StoredProfile } from '@pbh/core';
import { chartFigureHtml } from '../chart-figure.js';
import { fmtBytes, fmtCount, fmtNum } from '../format.js';
import { generationCharts, QUANTILE_COLUMNS, quantileRows } from '../generation-view.js';
import { html, type Html } from '../html.js';

const ms = (ns: number): number => ns / 1e6;

/** A generative model's section: requests, TTFT, ITL, throughput, goodput, perplexity, the gate, the KV cache and their charts. */
export function generationHtml(profile: StoredProfile): Html | null {
  const g = profile.generation;
  const charts = g && generationCharts(g);
  if (!g || !charts) return null;
  const stated = g.scenario === 'server'
    ? `server: Poisson arrivals at ${fmtNum(g.request_rate)} requests/s, at most ${g.concurrency} in flight`
    : 'single stream: one request at a time, each issued when the last finished';
  const ppl = g.perplexity ?? null;
  const card = (figure: string, words: string): Html => html`<div class="card"><b>${figure}</b><span>${words}</span></div>`;
  const table = { columns: QUANTILE_COLUMNS, rows: quantileRows(g) };
  return html`<section id="generation"><h2>Generation</h2><p>${fmtCount(g.requests)} requests a session, ${stated}; prompts of ${fmtNum(g.prompt_tokens.min)}–${fmtNum(g.prompt_tokens.max)} tokens (mean ${fmtNum(g.prompt_tokens.mean)}), ${g.max_new_tokens} new tokens each by greedy decoding. TTFT runs from a request's arrival to its first token (queueing and prefill); ITL is every gap between two tokens; TPOT a request's decode time over its tokens after the first.</p><div class="cards">${[
    card(`${fmtNum(ms(g.ttft.p50))} ms`, `TTFT p50 (p99 ${fmtNum(ms(g.ttft.p99))} ms)`),
    card(`${fmtNum(ms(g.itl.p50))} ms`, `ITL p50 (p99 ${fmtNum(ms(g.itl.p99))} ms)`),
    card(fmtNum(g.output_tokens_per_s), `output tokens/s (${fmtNum(g.total_tokens_per_s)} with the prompts)`),
    card(
      g.goodput_rps === null ? '—' : fmtNum(g.goodput_rps),
      g.slo
        ? `goodput, requests/s within TTFT ${g.slo.ttft_ms ?? '—'} ms and TPOT ${g.slo.itl_ms ?? '—'} ms (${fmtCount(g.good_requests)} of ${fmtCount(g.requests * profile.sessions.length)} requests over the sessions)`
        : 'goodput: no SLOs set',
    ),
    card(ppl ? fmtNum(ppl.perplexity) : '—', ppl ? `perplexity on ${fmtCount(ppl.tokens)} held-out tokens: ${fmtNum(ppl.nll_nats)} nats/token (uniform: ${fmtNum(ppl.uniform_nll_nats)})` : 'perplexity not scored'),
    card(g.gate ? (g.gate.passed ? 'match' : 'diverged') : '—', g.gate ? `greedy continuations of ${g.gate.prompts} prompts against ${g.gate.reference_engine}, token for token` : 'no gate (this is the reference engine)'),
    card(fmtBytes(g.kv_cache_bytes), `key-value cache per request (${fmtBytes(g.kv_cache_bytes_in_flight)} at ${g.concurrency} in flight)`),
  ]}</div>${charts.ttft && chartFigureHtml({ svg: charts.ttft, title: 'Time to first token', caption: 'per request, session 1', table })}${charts.itl && chartFigureHtml({ svg: charts.itl, title: 'Inter-token latency', caption: 'every gap between tokens, session 1', table })}</section>`;
}
