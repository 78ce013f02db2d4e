import { ratioInterval } from '@pbh/core';
import { describe, expect, it } from 'vitest';
import { engineOf, variantOf } from '../src/lib/compression.js';
import type { ProfileEntry } from '../src/lib/data.js';
import { groupAnswerHtml } from '../src/lib/group-summary.js';
import { fmtRatio, leadOf, leadText } from '../src/lib/lead.js';
import { pruningMethods } from '../src/lib/sparsity.js';

/**
 * An entry of a leaderboard group with only the fields the lead, the precision line and the compression labels read
 * (the browser tests build whole ones from real runs): its sessions' throughputs, the mean of them.
 */
function entry(id: string, engine: string, entryName: string, precision: string, sessions: number[], extra: Record<string, unknown> = {}): ProfileEntry {
  return {
    profile_id: id,
    engine_name: engine,
    engine_entry: entryName,
    precision,
    model_name: 'm',
    session_throughputs: sessions,
    throughput_mean: sessions.reduce((s, v) => s + v, 0) / sessions.length,
    profile: { engine: { facts: {}, options: {}, process: 'worker' }, model: null },
    ...extra,
  } as unknown as ProfileEntry; // only the fields above are read
}

describe('the lead of a group\'s fastest entry', () => {
  it('is the ratio of the means with the 95% interval from both Profiles\' sessions, or tied where the interval holds 1', () => {
    const fast = entry('a', 'onnxruntime', 'onnxruntime', 'fp32', [1500, 1510, 1490]);
    const slow = entry('b', 'openvino', 'openvino', 'fp32', [1000, 1005, 995]);
    const lead = leadOf(fast, slow)!;
    const interval = ratioInterval([1000, 1005, 995], [1500, 1510, 1490])!;
    expect(lead.tied).toBe(false);
    expect(leadText(lead, 'openvino')).toBe(`${fmtRatio(interval.ratio)}× [${fmtRatio(interval.low)}, ${fmtRatio(interval.high)}] faster than openvino`);
    const close = entry('c', 'openvino', 'openvino', 'fp32', [1400, 1600, 1450]);
    const tied = leadOf(fast, close)!;
    expect(tied.tied).toBe(true);
    expect(leadText(tied, 'openvino')).toMatch(/^tied on this machine with openvino: 1\.0\d× \[0\.\d\d, 1\.\d\d\]$/);
    // One session a side: the ratio, and that there is no interval.
    expect(leadText(leadOf(entry('d', 'x', 'x', 'fp32', [2000]), slow)!, 'openvino')).toContain('no interval');
  });

  it('takes the paired rounds\' ratio where the two ran in the same interleaved rounds', () => {
    const slow = entry('b', 'openvino', 'openvino', 'fp32', [1000, 1005, 995]);
    const pair = { other_profile_id: 'b', other_cell_key: 'k', other_engine: 'openvino', other_precision: 'fp32', ratio: 1.04, ci95_low: 0.99, ci95_high: 1.09, rounds: 7, verdict: 'tied' };
    const fast = entry('a', 'onnxruntime', 'onnxruntime', 'fp32', [1500, 1510, 1490]);
    const paired = { ...fast, profile: { ...fast.profile, rounds: { pairs: [pair] } } } as unknown as ProfileEntry;
    const lead = leadOf(paired, slow)!;
    // The sessions alone would call it 1.5x faster; the rounds, where a shift of the machine hit both alike, say tied.
    expect(lead).toMatchObject({ ratio: 1.04, tied: true, pairedRounds: 7 });
    expect(leadText(lead, 'openvino')).toBe('tied on this machine with openvino: 1.04× [0.99, 1.09]');
  });

  it('compares a precision with fp32 on the same engine only, never with another engine\'s fp32', () => {
    const rows = [
      entry('ort', 'onnxruntime', 'onnxruntime', 'fp32', [1500, 1510, 1490]),
      entry('bf16', 'openvino', 'openvino-bf16', 'bf16', [1060, 1065, 1055]),
      entry('ov', 'openvino', 'openvino', 'fp32', [1000, 1005, 995]),
    ];
    const html = groupAnswerHtml(rows, new Map());
    const precisions = /<span class="precisions">(.*)<\/span>/.exec(html)?.[1] ?? '';
    const interval = ratioInterval([1000, 1005, 995], [1060, 1065, 1055])!;
    expect(precisions).toBe(`Precisions on the same engine: bf16 on openvino: openvino-bf16 1,060 = ${fmtRatio(interval.ratio)}× [${fmtRatio(interval.low)}, ${fmtRatio(interval.high)}] its fp32 (openvino 1,000)`);
    expect(precisions).not.toContain('onnxruntime');
  });
});

describe('the compression study\'s labels', () => {
  it('sets TVM tuned against tuned and untuned against untuned, and OpenVINO bf16 against OpenVINO', () => {
    const tvm = (tune: boolean) => entry(`t${tune}`, 'tvm', tune ? 'tvm-tuned' : 'tvm-untuned', 'fp32', [1], { profile: { engine: { facts: { tune }, options: {}, process: 'worker' }, model: null } });
    expect(engineOf(tvm(true))).toBe('tvm tuned');
    expect(engineOf(tvm(false))).toBe('tvm untuned');
    expect(engineOf(entry('o', 'openvino', 'openvino-bf16', 'bf16', [1]))).toBe('openvino');
  });

  it('names a pruning method from metadata, the pruned source\'s for its INT8 copy, and none where no file recorded one', () => {
    const sparsity = (kind: string, method: string | null) => ({ kind, method, actual: 0.5, target: 0.5, n: kind === 'n_m' ? 2 : null, m: kind === 'n_m' ? 4 : null, nm_pattern_holds: null });
    const model = (name: string, s: ReturnType<typeof sparsity>, quantized: boolean) =>
      entry(name, 'onnxruntime', 'onnxruntime', quantized ? 'int8' : 'fp32', [1], {
        model_name: name,
        profile: { engine: { facts: {}, options: {}, process: 'worker' }, model: { sparsity: s, quantized: quantized ? { method: 'static' } : null, quantization: null } },
      });
    const pruned = model('net_obc_2of4', sparsity('n_m', 'obc'), false);
    const copy = model('net_obc_2of4_static_int8', sparsity('n_m', null), true);
    const bare = model('net_sparse50', sparsity('unstructured', null), false);
    const methods = pruningMethods([pruned, copy, bare]);
    expect(methods.get('net_obc_2of4_static_int8')).toBe('obc');
    expect(variantOf(copy, methods.get(copy.model_name) ?? null).variant).toBe('2:4 (obc) + INT8 static');
    expect(variantOf(bare, methods.get(bare.model_name) ?? null).variant).toBe('50%');
  });
});
