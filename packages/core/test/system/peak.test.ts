import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { opsPerCycle, peakFlops, precisionPeak } from '../../src/system/peak.js';

const SAPPHIRE_RAPIDS = 'fpu sse2 avx fma avx2 avx512f avx512bw avx512_vnni avx_vnni avx512_bf16 amx_bf16 amx_int8 amx_tile avx512_fp16';
const ICE_LAKE = 'fpu sse2 avx fma avx2 avx512f avx512bw avx512_vnni';
const HASWELL = 'fpu sse2 avx fma avx2';

describe('peak by precision', () => {
  it('takes each precision from its widest unit, and falls back to the fp32 units where a CPU has none', () => {
    const spr = opsPerCycle(SAPPHIRE_RAPIDS);
    expect([spr.fp32.isa, spr.bf16.isa, spr.fp16.isa, spr.int8.isa]).toEqual(['avx512f', 'amx_bf16', 'avx512_fp16', 'amx_int8']);
    // AMX's tiles: 16x16x32 bf16 (16x16x64 int8) multiply-adds every 16 cycles, 2 ops each.
    expect(spr.bf16.perCycle).toBe((16 * 16 * 32 * 2) / 16);
    expect(spr.int8.perCycle).toBe((16 * 16 * 64 * 2) / 16);
    const icl = opsPerCycle(ICE_LAKE);
    expect(icl.int8).toEqual({ perCycle: 4 * icl.fp32.perCycle, isa: 'avx512_vnni' });
    expect(icl.bf16.isa).toBe('avx512f, as fp32');
    const hsw = opsPerCycle(HASWELL);
    expect(hsw.bf16.perCycle).toBe(hsw.fp32.perCycle);
    expect(hsw.int8.perCycle).toBe(2 * hsw.fp32.perCycle);
  });

  it('is cores x clock x rate, and names the clock and unit it used', () => {
    const system = { cpu_physical_cores: 2, cpu_ghz: 2.6, cpu_flags: SAPPHIRE_RAPIDS, peak_flops_formula: 'x; here 2 x 2.6 GHz (cpufreq max clock) x 64 (avx512f)' };
    const int8 = precisionPeak(system, 'int8')!;
    expect(int8.ops_per_s).toBeCloseTo(2 * 2.6e9 * 2048, -3);
    expect(int8.formula).toContain('cpufreq max clock');
    expect(int8.formula).toContain('amx_int8');
    expect(precisionPeak(system, 'fp64')!.precision).toBe('fp32');
    expect(peakFlops(2, 2.6, SAPPHIRE_RAPIDS)).toBe(precisionPeak(system, 'fp32')!.ops_per_s);
    expect(precisionPeak({ ...system, cpu_ghz: 0 }, 'bf16')).toBeNull();
  });

  it("this machine's flags give every precision a peak at least fp32's", () => {
    let flags = '';
    try {
      flags = /^flags\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '';
    } catch {
      flags = HASWELL;
    }
    const rates = opsPerCycle(flags);
    for (const p of ['bf16', 'fp16', 'int8'] as const) expect(rates[p].perCycle).toBeGreaterThanOrEqual(rates.fp32.perCycle);
  });
});
