import { describe, expect, it } from 'vitest';
import { EnergySchema } from '../../src/contracts/energy.js';
import { openEnergyMeter, raplPlugin, summarizeEnergy, type DomainWindow, type EnergyReaderPlugin } from '../../src/energy/index.js';
import { powercapTree } from './powercap-tree.js';

const tdp = { watts: 200, threads: 40, watts_per_thread: 5, source: 'table' as const, entry: 'Xeon Test' };
const facts = { minTicks: 20, unavailable: [], tdp };

const rapl = (name: string, kind: 'package' | 'core' | 'dram', joules: number | null, seconds: number): DomainWindow => ({
  name, kind, device: 'cpu', counted: kind !== 'core', method: 'rapl', joules, seconds, ticks: Math.floor(seconds / 0.001), updatePeriodS: 0.001, reason: joules === null ? 'unreadable' : null,
});
const estimate = (ticks: number, seconds: number): DomainWindow => ({
  name: 'cpu', kind: 'cpu', device: 'cpu', counted: false, method: 'estimated_tdp', joules: ticks ? (ticks / 100) * 5 : null, seconds, ticks, updatePeriodS: 0.01, reason: ticks ? null : 'no tick',
});

describe('the Profile\'s energy', () => {
  it('counts package + dram by RAPL when every session ticked enough, keeping the estimate beside it uncounted', () => {
    const sessions = [0, 1].map((index) => ({ index, windows: [rapl('package-0', 'package', 10, 0.5), rapl('core-0', 'core', 6, 0.5), rapl('dram-0', 'dram', 2, 0.5), estimate(60, 0.5)], problems: [] }));
    const e = EnergySchema.parse(summarizeEnergy(sessions, [100, 100], facts, null));
    expect(e.method).toBe('rapl');
    expect(e.joules_per_sample).toBe(24 / 200);
    expect(e.mean_watts).toBe(24 / 1);
    expect(e.sessions.map((s) => s.joules)).toEqual([12, 12]);
    expect(e.domains.find((d) => d.name === 'cpu')).toMatchObject({ counted: false, joules: 6 });
    expect(e.reason).toBeNull();
  });

  it('a session with fewer than min_ticks RAPL updates is not reported as measured: the CPU is estimated, saying why', () => {
    const sessions = [
      { index: 0, windows: [rapl('package-0', 'package', 10, 0.5), estimate(60, 0.5)], problems: [] },
      { index: 1, windows: [rapl('package-0', 'package', 0.1, 0.005), estimate(1, 0.005)], problems: [] },
    ];
    const e = EnergySchema.parse(summarizeEnergy(sessions, [100, 1], facts, null));
    expect(e.method).toBe('estimated_tdp');
    // 61 ticks at 100 per second, 5 W each: 3.05 J over 101 samples.
    expect(e.joules_per_sample).toBeCloseTo(3.05 / 101, 12);
    expect(e.reason).toMatch(/RAPL not used: package-0: session 2 saw 5 counter updates .* fewer than min_ticks 20: the CPU is estimated from TDP/);
    expect(e.domains.find((d) => d.name === 'package-0')).toMatchObject({ counted: false, joules: 10.1 });
  });

  it('no counter and no TDP is NULL with every reader\'s reason, never 0', () => {
    const e = EnergySchema.parse(
      summarizeEnergy([{ index: 0, windows: [], problems: [] }], [10], { minTicks: 20, unavailable: [{ reader: 'rapl', reason: '/sys/class/powercap is absent' }, { reader: 'tdp', reason: 'CPU not in the table' }], tdp: null }, null),
    );
    expect(e.joules_per_sample).toBeNull();
    expect(e.method).toBeNull();
    expect(e.reason).toMatch(/powercap is absent.*CPU not in the table/);
  });

  it('the idle baseline is each counted domain\'s watts at rest; the estimate has none and says why', () => {
    const windows = [rapl('package-0', 'package', 10, 1), rapl('dram-0', 'dram', 1, 1)];
    const idle = { seconds: 2, windows: [rapl('package-0', 'package', 8, 2), rapl('dram-0', 'dram', 1, 2)] };
    const e = summarizeEnergy([{ index: 0, windows, problems: [] }], [10], facts, idle);
    expect(e.idle_baseline).toEqual({ seconds: 2, watts: 4.5, reason: null });
    const est = summarizeEnergy([{ index: 0, windows: [estimate(50, 1)], problems: [] }], [10], facts, { seconds: 1, windows: [estimate(0, 1)] });
    expect(est.idle_baseline?.watts).toBeNull();
    expect(est.idle_baseline?.reason).toMatch(/nil at rest/);
  });

  it('the meter opens every plugin, keeps who could not run and why, and one failing reader loses only its figure', async () => {
    const tree = await powercapTree([{ id: 'intel-rapl:0', name: 'package-0', energyUj: 1_000 }]);
    const broken: EnergyReaderPlugin = {
      name: 'broken',
      open: async () => ({ reader: { name: 'broken', begin: async () => { throw new Error('sidecar gone'); }, poll: async () => {}, end: async () => [], close: async () => {} } }),
    };
    const absent: EnergyReaderPlugin = { name: 'nvml', open: async () => ({ unavailable: 'nvmlInit failed' }) };
    const meter = await openEnergyMeter({ enabled: true, min_ticks: 20, poll_ms: 5, idle_baseline_s: 0 }, null, [raplPlugin(tree.root), absent, broken]);
    expect(meter.facts.unavailable).toEqual([{ reader: 'nvml', reason: 'nvmlInit failed' }]);
    await meter.begin([process.pid]);
    await tree.set('intel-rapl:0', 51_000);
    await new Promise((r) => setTimeout(r, 40));
    const s = await meter.end(0);
    expect(s.windows.map((w) => [w.name, w.joules])).toEqual([['package-0', 0.05]]);
    expect(s.problems).toEqual(['broken: sidecar gone']);
    await meter.close();
  });
});

describe('a GPU\'s figure', () => {
  const gpu = (method: 'nvml_energy' | 'nvml_power', joules: number, ticks: number, fallback?: DomainWindow): DomainWindow => ({
    name: 'gpu-0', kind: 'gpu', device: 'gpu', counted: true, method, joules, seconds: 2, ticks, updatePeriodS: 0.05, reason: null, ...(fallback ? { fallback } : {}),
  });

  it('is the energy counter when it ticked enough, its power samples when not, each labelled', () => {
    const power = gpu('nvml_power', 410, 60);
    const counter = EnergySchema.parse(summarizeEnergy([{ index: 0, windows: [gpu('nvml_energy', 400, 40, power)], problems: [] }], [1000], facts, null));
    expect(counter.domains[0]).toMatchObject({ method: 'nvml_energy', joules: 400, counted: true });
    const short = EnergySchema.parse(summarizeEnergy([{ index: 0, windows: [gpu('nvml_energy', 400, 10, power)], problems: [] }], [1000], facts, null));
    expect(short.domains[0]).toMatchObject({ method: 'nvml_power', joules: 410 });
    expect(short.domains[0]!.reason).toMatch(/session 1 saw 10 counter updates .* fewer than min_ticks 20; power samples \(nvml_power\) instead/);
    expect(short.method).toBe('nvml_power');
  });

  it('without the counter, power samples that changed fewer than min_ticks times are NULL with the reason', () => {
    const e = EnergySchema.parse(summarizeEnergy([{ index: 0, windows: [gpu('nvml_power', 50, 3)], problems: [] }], [1000], facts, null));
    expect(e.domains[0]!.joules).toBeNull();
    expect(e.domains[0]!.reason).toMatch(/power samples not reported as measured: session 1 saw 3/);
  });
});
