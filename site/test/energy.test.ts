import { EnergySchema, offEnergy, type Energy } from '@pbh/core';
import { describe, expect, it } from 'vitest';
import type { ProfileEntry } from '../src/lib/data.js';
import { energyFront } from '../src/lib/energy-chart.js';
import { fmtJoules } from '../src/lib/energy.js';
import { energyHtml } from '../src/lib/profile-page/energy.js';

/** Only what the front reads is filled in; the site tests build the pages from real runs. */
const point = (id: string, sps: number, j: number | null): ProfileEntry => ({ profile_id: id, throughput_mean: sps, energy_j_per_sample: j }) as unknown as ProfileEntry;

describe('energy on the site', () => {
  it('the Pareto front keeps the Profiles no other is both faster and thriftier than', () => {
    const front = energyFront([point('a', 100, 2e-3), point('b', 200, 1e-3), point('c', 150, 3e-3), point('d', 300, 1.5e-3), point('e', 400, null)]);
    expect(front.map((p) => p.profile_id)).toEqual(['b', 'd']);
  });

  it('prints joules in a readable unit', () => {
    expect([fmtJoules(2.5), fmtJoules(0.0125), fmtJoules(9.76e-5), fmtJoules(null)]).toEqual(['2.5 J', '12.5 mJ', '97.6 µJ', '—']);
  });

  it("a Profile page says estimated from TDP in words, every domain's ticks and period, and a NULL's reason", () => {
    const estimated: Energy = EnergySchema.parse({
      ...offEnergy('no RAPL counter: the CPU is estimated from TDP'),
      joules_per_sample: 1e-4,
      mean_watts: 3,
      method: 'estimated_tdp',
      min_ticks: 20,
      domains: [{ name: 'cpu', kind: 'cpu', device: 'cpu', counted: true, method: 'estimated_tdp', joules_per_sample: 1e-4, mean_watts: 3, joules: 0.3, seconds: 0.1, update_period_s: 0.01, ticks: 77, idle_watts: null, reason: null }],
      unavailable: [{ reader: 'rapl', reason: '/sys/class/powercap is absent' }],
    });
    const page = energyHtml({ energy: estimated } as never)!.value;
    expect(page).toContain('100 µJ per sample</b>, 3 W on average · estimated from TDP');
    expect(page).toMatch(/<td>cpu<td>estimated from TDP<td>100 µJ<td>3<td>10 ms<td>77/);
    expect(page).toContain('rapl: /sys/class/powercap is absent');
    const off = energyHtml({ energy: offEnergy('energy collection is off (energy.enabled: false)') } as never)!.value;
    expect(off).toContain('<b>not measured</b>. <span class="note">energy collection is off');
    expect(energyHtml({ energy: null } as never)).toBeNull();
  });
});
