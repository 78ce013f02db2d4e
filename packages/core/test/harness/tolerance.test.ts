import { describe, expect, it } from 'vitest';
import { argmaxAgreement, decodeHalves, quantizationBits, quantizedTolerance, toleranceFor } from '../../src/harness/tolerance.js';
import { numberToHalf } from '../../src/harness/half.js';
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

  it('takes the coarser of the executed and the model precision: an fp16 model run in fp32 still differs by fp16 rounding', () => {
    const t = toleranceFor('fp32', config, ref, { quantization: null, precision: 'fp16' });
    expect(t).toMatchObject({ kind: 'reduced_precision', precision: 'fp32' });
    expect(t.rtol).toBeCloseTo(8 * 2 ** -11, 12);
    expect(t.rule).toMatch(/^fp16 model \(executed fp32\)/);
  });
});

describe('quantized models', () => {
  it('reads the bits of integer quantization types and none of float ones', () => {
    expect([quantizationBits('int8'), quantizationBits('uint8'), quantizationBits('int4'), quantizationBits('float16'), quantizationBits(null)]).toEqual([8, 8, 4, null, null]);
  });

  it('allows one 8-bit rounding step per layer over 4 layers: rtol = 8 x 2^-8, atol = that x max|reference|', () => {
    const t = toleranceFor('fp32', config, ref, { quantization: 'uint8', precision: 'fp32' });
    expect(t).toMatchObject({ kind: 'quantized', precision: 'fp32' });
    expect(t.rtol).toBeCloseTo(8 * 2 ** -8, 12);
    expect(t.atol).toBeCloseTo(8 * 2 ** -8 * 20, 12);
    expect(t.rule).toMatch(/^uint8-quantized model: rtol = 8u, atol = 8u x max\|reference\| \(u = 2\^-8/);
    // 4-bit weights: 16 times looser.
    expect(quantizedTolerance(4, config, ref, 'fp32', 'int4').rtol).toBeCloseTo(8 * 2 ** -4, 12);
  });
});

describe('the decoded result', () => {
  it('compares float16 outputs as values, not as their bit patterns', () => {
    const half = { y: { dtype: 'float16' as const, dims: [1, 3], data: Uint16Array.from([-20, 1, 4], numberToHalf) } };
    expect([...(decodeHalves(half).y!.data as Float32Array)]).toEqual([-20, 1, 4]);
  });

  it('measures argmax agreement over the last axis', () => {
    const a = { dtype: 'float32' as const, dims: [2, 3], data: Float32Array.from([0, 5, 1, 9, 0, 0]) };
    const b = { dtype: 'float32' as const, dims: [2, 3], data: Float32Array.from([0, 4, 2, 0, 0, 9]) };
    expect(argmaxAgreement(a, b)).toBe(0.5);
  });
});
