import { describe, expect, it } from 'vitest';
import { engineSeries } from '../src/lib/comparisons.js';
import { latencyHeading, precisionText, verdictText } from '../src/lib/labels.js';

describe('precisionText', () => {
  it('names the executed precision, and the request only where the runtime did something else', () => {
    expect(precisionText('fp32', 'fp32')).toBe('fp32');
    expect(precisionText('fp32', 'bf16')).toBe('fp32 (asked bf16)');
    // Stored before precision was recorded, or ended before it was resolved.
    expect(precisionText(null, null)).toBeNull();
  });
});

describe('latencyHeading', () => {
  const at = (latency_boundary: 'engine' | 'predict', p50_ms: number | null = 1) => ({ latency_boundary, p50_ms });

  it('names the one boundary a table is at; rows with nothing measured do not count', () => {
    expect(latencyHeading([at('engine'), at('engine'), at('predict', null)])).toEqual({ label: 'engine', mixed: false });
    expect(latencyHeading([at('predict')])).toEqual({ label: 'predict', mixed: false });
  });

  it('says "headline" and asks each value to name its boundary when a table mixes them', () => {
    expect(latencyHeading([at('engine'), at('predict')])).toEqual({ label: 'headline', mixed: true });
    expect(latencyHeading([])).toEqual({ label: 'headline', mixed: false });
  });
});

describe('engineSeries', () => {
  const entry = (engine_entry: string, precisionLabel: string | null) => ({ engine_entry, precisionLabel });

  it('names the entry, so two labelled entries of one engine at one precision are two series', () => {
    const profiles = [entry('ort-server', 'fp32'), entry('ort-offline', 'fp32'), entry('onnxruntime', 'fp32')];
    expect(profiles.map(engineSeries(profiles))).toEqual(['ort-server', 'ort-offline', 'onnxruntime']);
  });

  it('adds the precision only to entries that ran at more than one', () => {
    const profiles = [entry('openvino', 'fp32'), entry('openvino', 'fp32 (asked bf16)'), entry('onnxruntime', 'fp32'), entry('onnxruntime', 'fp32')];
    expect(profiles.map(engineSeries(profiles))).toEqual(['openvino fp32', 'openvino fp32 (asked bf16)', 'onnxruntime', 'onnxruntime']);
    const old = [entry('tvm', 'fp32'), entry('tvm', null)];
    expect(old.map(engineSeries(old))).toEqual(['tvm fp32', 'tvm precision unknown']);
  });
});

describe('verdictText', () => {
  const verdict = { validity: 'INVALID' as const, validity_reasons: ['every session: p99 latency 9.2 ms exceeds the latency bound 5 ms', 'session 2: early stopping'], scenario_metric: 'p99_latency_ms', scenario_value: 9.177 };

  it('says the verdict with the reported figure, then every reason on its own line', () => {
    expect(verdictText(verdict)).toBe('INVALID (p99_latency_ms 9.18)\n• every session: p99 latency 9.2 ms exceeds the latency bound 5 ms\n• session 2: early stopping');
    expect(verdictText({ ...verdict, validity: 'VALID', validity_reasons: [] })).toBe('VALID (p99_latency_ms 9.18)');
  });

  it('is null where the scenario never ran', () => {
    expect(verdictText({ validity: null, validity_reasons: null, scenario_metric: null, scenario_value: null })).toBeNull();
  });
});
