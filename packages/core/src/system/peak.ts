/**
 * Theoretical peak FP32 FLOP/s of the CPU:
 *   peak = physical cores x max clock (Hz) x FP32 FLOPs per cycle per core
 * FLOPs per cycle from the widest vector ISA the flags show, assuming two FMA pipes where FMA exists
 * (true for Intel since Haswell and AMD since Zen 2): AVX-512F 2x16x2 = 64, AVX2+FMA 2x8x2 = 32,
 * AVX 8 (mul) + 8 (add) = 16, SSE2 4+4 = 8, ARM NEON/ASIMD 2x4x2 = 16, otherwise 2 (one scalar FMA).
 * It is an upper bound: real kernels rarely exceed 70-80% of it.
 */
export const PEAK_FORMULA =
  'physical_cores x max_clock_hz x fp32_flops_per_cycle (AVX-512F 64, AVX2+FMA 32, AVX 16, SSE2 8, NEON 16, scalar 2)';

export function flopsPerCycle(flags: string): { perCycle: number; isa: string } {
  const f = new Set(flags.toLowerCase().split(/\s+/));
  if (f.has('avx512f')) return { perCycle: 64, isa: 'avx512f' };
  if (f.has('avx2') && f.has('fma')) return { perCycle: 32, isa: 'avx2+fma' };
  if (f.has('avx')) return { perCycle: 16, isa: 'avx' };
  if (f.has('sse2')) return { perCycle: 8, isa: 'sse2' };
  if (f.has('asimd') || f.has('neon')) return { perCycle: 16, isa: 'neon' };
  return { perCycle: 2, isa: 'scalar' };
}

export function peakFlops(physicalCores: number, ghz: number, flags: string): number | null {
  if (!(physicalCores > 0) || !(ghz > 0)) return null;
  return physicalCores * ghz * 1e9 * flopsPerCycle(flags).perCycle;
}
