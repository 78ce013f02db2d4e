import { describe, expect, it } from 'vitest';
import { toleranceFor } from '../../src/harness/tolerance.js';
import type { TensorMap } from '../../src/contracts/tensor.js';

const ref: TensorMap = { y: { dtype: 'float32', dims: [1, 3], data: Float32Array.from([-20, 1, 4]) } };
const config = { atol: 1e-3, rtol: 1e-3 };

describe('toleranceFor', () => {
  it("keeps the config's tolerance where the arithmetic is the reference's own", () => {
    expect(toleranceFor('fp32', config, ref)).toMatchObject({ atol: 1e-3, rtol: 1e-3, precision: 'fp32' });
  });

  it('scales reduced precision by its unit roundoff and the outputs scale', () => {
    const bf16 = toleranceFor('bf16', config, ref);
    expect(bf16.rtol).toBeCloseTo(8 * 2 ** -8, 12);
    expect(bf16.atol).toBeCloseTo(8 * 2 ** -8 * 20, 12);
    const fp16 = toleranceFor('fp16', config, ref);
    expect(fp16.rtol).toBeCloseTo(8 * 2 ** -11, 12);
    expect(fp16.atol).toBeLessThan(bf16.atol);
  });

  it("is never tighter than the config's", () => {
    const loose = toleranceFor('bf16', { atol: 10, rtol: 0.5 }, ref);
    expect(loose).toMatchObject({ atol: 10, rtol: 0.5 });
  });
});
