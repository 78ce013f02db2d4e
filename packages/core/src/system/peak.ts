/**
 * Theoretical peak of the CPU, per precision:
 *   peak = physical cores x clock (Hz) x operations per cycle per core of the widest unit the flags show
 * One multiply-add is 2 operations (FLOPs for floats, OPs for int8), as model/flops.ts counts a model's work.
 * Per cycle per core, from the ISA flags and the documented unit widths, assuming two 512-bit FMA ports where
 * AVX-512 exists (Intel Xeon Scalable Gold/Platinum, Sapphire Rapids and later; one-port parts reach half):
 *   fp32  AVX-512F 2 x 16 lanes x 2 = 64, AVX2+FMA 2 x 8 x 2 = 32, AVX 8 mul + 8 add = 16, SSE2 8, NEON 16, scalar 2
 *   bf16  AMX-BF16 1024 (TDPBF16PS: a 16x16x32 tile product, 8192 multiply-adds, every 16 cycles),
 *         AVX512-BF16 128 (VDPBF16PS: 32 bf16 pairs per 512-bit port, 2 ports), else fp32's (converted to fp32)
 *   fp16  AMX-FP16 1024, AVX512-FP16 128 (32 half lanes x 2 ports x 2), else fp32's (F16C converts to fp32)
 *   int8  AMX-INT8 2048 (TDPBUSD: 16x16x64 every 16 cycles), AVX512-VNNI 256 (VPDPBUSD: 64 u8 x s8 per port,
 *         2 ports), AVX-VNNI 128 (256-bit), AVX-512BW 128 and AVX2 64 (VPMADDUBSW + VPMADDWD: half VNNI's rate),
 *         else fp32's
 * at the highest clock the machine reports: cpufreq's cpuinfo_max_freq where present, else the maximum
 * systeminformation reads, else the current clock in /proc/cpuinfo (a VM's: turbo may run above it, so a fraction
 * above 100% means the peak is underestimated, never that it was beaten). Real kernels rarely exceed 70-80% of it.
 */
import type { Precision } from '../contracts/precision.js';

export const PEAK_FORMULA =
  'physical_cores x clock_hz x ops_per_cycle of the executed precision (fp32: AVX-512F 64, AVX2+FMA 32, AVX 16, SSE2 8, NEON 16, scalar 2; bf16: AMX 1024, AVX512-BF16 128; fp16: AMX 1024, AVX512-FP16 128; int8: AMX 2048, AVX512-VNNI 256, AVX-VNNI 128; system/peak.ts)';

export type PeakPrecision = 'fp32' | 'bf16' | 'fp16' | 'int8';
export const PEAK_PRECISIONS: readonly PeakPrecision[] = ['fp32', 'bf16', 'fp16', 'int8'];

export interface UnitRate {
  perCycle: number;
  /** The ISA feature (a /proc/cpuinfo flag) the rate is for. */
  isa: string;
}

const flagSet = (flags: string): Set<string> => new Set(flags.toLowerCase().split(/[\s,]+/));

export function flopsPerCycle(flags: string): UnitRate {
  const f = flagSet(flags);
  if (f.has('avx512f')) return { perCycle: 64, isa: 'avx512f' };
  if (f.has('avx2') && f.has('fma')) return { perCycle: 32, isa: 'avx2+fma' };
  if (f.has('avx')) return { perCycle: 16, isa: 'avx' };
  if (f.has('sse2')) return { perCycle: 8, isa: 'sse2' };
  if (f.has('asimd') || f.has('neon')) return { perCycle: 16, isa: 'neon' };
  return { perCycle: 2, isa: 'scalar' };
}

/** Operations per cycle per core for each precision, with the unit that sets it (the table above). */
export function opsPerCycle(flags: string): Record<PeakPrecision, UnitRate> {
  const f = flagSet(flags);
  const fp32 = flopsPerCycle(flags);
  const first = (rates: [string, number][]): UnitRate => {
    const hit = rates.find(([flag]) => flag.split('+').every((x) => f.has(x)));
    return hit ? { perCycle: hit[1], isa: hit[0] } : { perCycle: fp32.perCycle, isa: `${fp32.isa}, as fp32` };
  };
  return {
    fp32,
    bf16: first([['amx_bf16', 1024], ['avx512_bf16', 128]]),
    fp16: first([['amx_fp16', 1024], ['avx512_fp16', 128]]),
    int8: first([['amx_int8', 2048], ['avx512_vnni', 256], ['avx_vnni', 128], ['avx512bw', 128], ['avx2', 64]]),
  };
}

/** The peak a precision is judged against (fp64 and anything unlisted: fp32's units, which are what it runs on). */
export function peakPrecision(precision: Precision): PeakPrecision {
  return (PEAK_PRECISIONS as readonly string[]).includes(precision) ? (precision as PeakPrecision) : 'fp32';
}

export function peakFlops(physicalCores: number, ghz: number, flags: string, precision: PeakPrecision = 'fp32'): number | null {
  if (!(physicalCores > 0) || !(ghz > 0)) return null;
  return physicalCores * ghz * 1e9 * opsPerCycle(flags)[precision].perCycle;
}

export interface PrecisionPeak {
  precision: PeakPrecision;
  /** FLOP/s (OP/s for int8). */
  ops_per_s: number;
  /** The numbers that made it, e.g. "2 x 2.6 GHz (current clock from /proc/cpuinfo) x 2048 (amx_int8)". */
  formula: string;
}

/** The peak of `precision` on a machine described as a Profile's system records it (cores, clock, flags, clock source). */
export function precisionPeak(
  system: { cpu_physical_cores: number; cpu_ghz: number; cpu_flags: string; peak_flops_formula: string },
  precision: Precision,
): PrecisionPeak | null {
  const which = peakPrecision(precision);
  const ops = peakFlops(system.cpu_physical_cores, system.cpu_ghz, system.cpu_flags, which);
  if (ops === null) return null;
  const clock = /GHz \(([^)]*)\)/.exec(system.peak_flops_formula)?.[1] ?? 'clock source not recorded';
  const rate = opsPerCycle(system.cpu_flags)[which];
  return { precision: which, ops_per_s: ops, formula: `${system.cpu_physical_cores} x ${system.cpu_ghz} GHz (${clock}) x ${rate.perCycle} ${which} ops/cycle (${rate.isa})` };
}
