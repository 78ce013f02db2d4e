import { describe, expect, it } from 'vitest';
import type { Tensor } from '../src/contracts/tensor.js';
import { createRegistry } from '../src/plugins/registry.js';
import { agreement, mae, mse, topK } from '../src/scorers/index.js';

const logits = (rows: number[][]): Record<string, Tensor> => ({
  logits: { dtype: 'float32', dims: [rows.length, rows[0]!.length], data: Float32Array.from(rows.flat()) },
});
const ctx = { outputName: 'logits' };

describe('scorers', () => {
  it('top-k counts a label among the k largest, and reduces exactly over batches', () => {
    const out = logits([
      [0.1, 0.7, 0.2],
      [0.5, 0.3, 0.2],
      [0.2, 0.3, 0.5],
    ]);
    const labels = { classes: Int32Array.from([1, 1, 0]) };
    const top1 = topK(1);
    const top2 = topK(2);
    const b1 = top1.score(out, labels, ctx);
    expect(b1).toEqual({ correct: 1, total: 3, nonfinite: 0 });
    expect(top2.score(out, labels, ctx)).toEqual({ correct: 2, total: 3, nonfinite: 0 });
    expect(top1.reduce([b1, { correct: 3, total: 3 }])[0]).toMatchObject({ metric: 'top1', value: 4 / 6, samples: 6, higherIsBetter: true });
    expect(() => top1.score(out, { classes: Int32Array.from([0, 0, 7]) }, ctx)).toThrow(/label 7 at row 2 is outside the model's 3 classes/);
    expect(() => top1.score(out, undefined, ctx)).toThrow(/needs integer class labels/);
  });

  it('top-k counts ties and non-finite rows as wrong, and refuses k >= classes', () => {
    const zeros = logits([
      [0, 0, 0],
      [0, 0, 0],
    ]);
    const labels = { classes: Int32Array.from([0, 2]) };
    expect(topK(1).score(zeros, labels, ctx)).toEqual({ correct: 0, total: 2, nonfinite: 0 });
    // Two rivals tie with the label: top-2 needs fewer than 2 at least as large.
    expect(topK(2).score(zeros, labels, ctx)).toEqual({ correct: 0, total: 2, nonfinite: 0 });
    const nan = logits([
      [NaN, NaN, NaN],
      [0.1, NaN, 0.9],
      [0.1, 0.2, 0.9],
    ]);
    expect(topK(1).score(nan, { classes: Int32Array.from([0, 2, 2]) }, ctx)).toEqual({ correct: 1, total: 3, nonfinite: 2 });
    expect(() => topK(3).score(zeros, labels, ctx)).toThrow(/top3 on an output of 3 classes is always right; use a k below 3/);
  });

  it('mse and mae against float targets', () => {
    const out = logits([[1, 2], [3, 4]]);
    const labels = { targets: Float32Array.from([1, 1, 1, 1]), width: 2 };
    expect(mse.reduce([mse.score(out, labels, ctx)])[0]).toMatchObject({ metric: 'mse', value: (0 + 1 + 4 + 9) / 4, higherIsBetter: false });
    expect(mae.reduce([mae.score(out, labels, ctx)])[0]).toMatchObject({ metric: 'mae', value: (0 + 1 + 2 + 3) / 4 });
    expect(() => mse.score(out, { classes: Int32Array.from([0, 1]) }, ctx)).toThrow(/needs float targets/);
  });

  it('agreement compares argmax and the largest difference with the reference outputs', () => {
    const out = logits([[0.1, 0.9], [0.8, 0.2]]);
    const reference = logits([[0.2, 0.8], [0.1, 0.9]]);
    const r = agreement.reduce([agreement.score(out, undefined, { ...ctx, reference })]);
    expect(r[0]).toMatchObject({ metric: 'agreement', value: 0.5 });
    expect(r[1]!.value).toBeCloseTo(0.7, 6);
  });

  it('the registry makes any topK on demand and suggests names for typos', async () => {
    const registry = await createRegistry();
    expect(registry.scorer('top3').name).toBe('top3');
    expect(() => registry.scorer('top0')).toThrow(/unknown scorer "top0"/);
    expect(() => registry.scorer('agrement')).toThrow(/did you mean "agreement"/);
  });
});
