import { describe, expect, it } from 'vitest';
import { engineSeries } from '../src/lib/comparisons.js';
import { latencyHeading, precisionText } from '../src/lib/labels.js';

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
  const entry = (engine_name: string, precisionLabel: string | null) => ({ engine_name, precisionLabel });

  it('adds the precision only to engines that ran at more than one', () => {
    const profiles = [entry('openvino', 'fp32'), entry('openvino', 'fp32 (asked bf16)'), entry('onnxruntime', 'fp32'), entry('onnxruntime', 'fp32')];
    expect(profiles.map(engineSeries(profiles))).toEqual(['openvino fp32', 'openvino fp32 (asked bf16)', 'onnxruntime', 'onnxruntime']);
    const old = [entry('tvm', 'fp32'), entry('tvm', null)];
    expect(old.map(engineSeries(old))).toEqual(['tvm fp32', 'tvm precision unknown']);
  });
});
