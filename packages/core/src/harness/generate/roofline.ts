import type { GenerationRequest, GenerationResult } from '../../contracts/generation.js';
import type { PrecisionPeak } from '../../system/peak.js';
import type { MemoryBandwidth } from '../../system/memory-bandwidth.js';
import { summarize } from '../../stats/summary.js';
import type { LmModel } from './lm-model.js';

const WEIGHT_BYTES: Record<string, number> = { fp64: 8, fp32: 4, bf16: 2, fp16: 2, int8: 1 };

export interface RooflineInputs {
  parameters: number;
  executed: string;
  lm: LmModel;
  maxNewTokens: number;
  scenario: 'single_stream' | 'server';
  requests: GenerationRequest[];
  /** The executed precision's peak; null when PBH cannot tell the machine's. */
  peak: PrecisionPeak | null;
  bandwidth: MemoryBandwidth;
}

/**
 * Prefill FLOP/s and decode bytes/s of one Profile, each against the machine's ceiling. Prefill: 2 × parameters FLOPs
 * per prompt token (a multiply-add per weight; attention's own FLOPs left out) over each single-stream request's TTFT,
 * the median; a server's TTFT holds queueing, so it reports none. Decode: every weight read once per token at the
 * executed precision's width plus the key-value cache at its mean length, over the median TPOT.
 */
export function roofline(i: RooflineInputs): NonNullable<GenerationResult['roofline']> {
  const flopsPerToken = 2 * i.parameters;
  const rates = i.requests.filter((r) => r.ttft_ns > 0).map((r) => (flopsPerToken * r.prompt_tokens) / (r.ttft_ns / 1e9));
  const prefillRate = i.scenario === 'single_stream' && rates.length > 0 ? summarize(rates).p50 : null;
  const weightBytes = i.parameters * (WEIGHT_BYTES[i.executed] ?? 4);
  const meanPrompt = i.requests.length > 0 ? i.requests.reduce((a, r) => a + r.prompt_tokens, 0) / i.requests.length : 0;
  const cacheBytes = i.lm.layout === 'pbh_cache' ? 2 * i.lm.cacheShape.reduce((a, d) => a * d, 1) * 4 : i.lm.kvBytesPerToken * (meanPrompt + i.maxNewTokens / 2);
  const bytesPerToken = weightBytes + cacheBytes;
  const tpots = i.requests.filter((r) => r.output_tokens > 1).map((r) => (r.e2e_ns - r.ttft_ns) / (r.output_tokens - 1));
  const bytesPerS = tpots.length > 0 ? bytesPerToken / (summarize(tpots).p50 / 1e9) : 0;
  return {
    method:
      'prefill: 2 x parameters FLOPs per prompt token over single-stream TTFT (attention FLOPs not counted); decode: parameters x the executed precision\'s width plus the KV cache at its mean length (PBH\'s cache graph: its whole capacity) per token, over TPOT',
    prefill:
      prefillRate === null
        ? null
        : { flops_per_token: flopsPerToken, flops_per_s: prefillRate, peak_ops_per_s: i.peak?.ops_per_s ?? null, share_of_peak: i.peak ? prefillRate / i.peak.ops_per_s : null },
    decode: { bytes_per_token: bytesPerToken, bytes_per_s: bytesPerS, bandwidth_bytes_per_s: i.bandwidth.bytes_per_s, bandwidth_method: i.bandwidth.method, share_of_bandwidth: bytesPerS / i.bandwidth.bytes_per_s },
  };
}
