import { describe, expect, it } from 'vitest';
import { OPTIMIZATION_METADATA_KEY, readOptimizationFacts } from '../../src/model/index.js';

const facts = {
  schema: 1,
  tool: 'pbh prune',
  method: 'obc',
  kind: 'n_m',
  target: 0.5,
  n: 2,
  m: 4,
  actual: 0.4931,
  layers: [{ weight: 'b0.dw.weight', node: 'b0.dw', op: 'Conv', shape: [16, 1, 3, 3], elements: 144, zeros: 64, sparsity: 0.4444, relative_error: 0.05 }],
  skipped_layers: [],
  calibration: { source: 'calibration.npy', samples: 1024, sha256: 'ab' },
  damping: 0.01,
  source: { file: 'digits_mobilenet_v2.onnx', sha256: 'cd' },
};
const meta = (value: unknown): Record<string, string> => ({ [OPTIMIZATION_METADATA_KEY]: typeof value === 'string' ? value : JSON.stringify(value) });

describe('optimization facts from ONNX metadata (pbh.optimization)', () => {
  it('reads what pbh prune writes', () => {
    expect(readOptimizationFacts(meta(facts))).toEqual({ facts, quantization: null, warning: null });
  });

  it('is null, without a warning, for a model nothing optimized', () => {
    expect(readOptimizationFacts({ 'pbh.weights': 'trained' })).toEqual({ facts: null, quantization: null, warning: null });
  });

  it('ignores malformed entries with a warning that says why', () => {
    expect(readOptimizationFacts(meta('{not json')).warning).toMatch(/pbh\.optimization is not JSON/);
    expect(readOptimizationFacts(meta({ ...facts, schema: 2 })).warning).toMatch(/does not match schema 1 \(schema: /);
    expect(readOptimizationFacts(meta({ ...facts, n: null })).warning).toMatch(/n and m are set exactly when kind is n_m/);
    expect(readOptimizationFacts(meta({ ...facts, n: 4, m: 4 })).warning).toMatch(/n must be below m/);
    expect(readOptimizationFacts(meta({ ...facts, target: 1.5 })).facts).toBeNull();
  });
});
