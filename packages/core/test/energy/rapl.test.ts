import { chmod, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { counterDelta, RAPL_DOCUMENTED_PERIOD_S, raplPlugin, type RaplReader } from '../../src/energy/index.js';
import { MAX_RANGE_UJ, powercapTree } from './powercap-tree.js';

async function open(root: string): Promise<RaplReader> {
  const opened = await raplPlugin(root).open();
  if (!('reader' in opened)) throw new Error(`expected a reader: ${opened.unavailable}`);
  return opened.reader as RaplReader;
}

describe('counterDelta', () => {
  it('is the plain difference without a wrap, and counts up to max_energy_range_uj then on from 0 across one', () => {
    expect(counterDelta(1_000, 4_500, MAX_RANGE_UJ)).toBe(3_500);
    expect(counterDelta(MAX_RANGE_UJ - 100, 40, MAX_RANGE_UJ)).toBe(140);
  });
});

describe('RAPL through a powercap tree of the kernel layout', () => {
  it('sums every delta exactly across a wrap, per domain and socket, and leaves out the mmio copy of package-0', async () => {
    const start = MAX_RANGE_UJ - 300_000;
    const tree = await powercapTree([
      { id: 'intel-rapl:0', name: 'package-0', energyUj: start },
      { id: 'intel-rapl:0:0', name: 'core', energyUj: 10 },
      { id: 'intel-rapl:0:1', name: 'uncore', energyUj: 77 },
      { id: 'intel-rapl:0:2', name: 'dram', energyUj: 5_000 },
      { id: 'intel-rapl:1', name: 'package-1', energyUj: 1_000 },
      { id: 'intel-rapl:1:0', name: 'core', energyUj: 20 },
      { id: 'intel-rapl-mmio:0', name: 'package-0', energyUj: 123 },
    ]);
    const reader = await open(tree.root);
    expect(reader.zones.map((z) => z.domain)).toEqual(['package-0', 'core-0', 'uncore-0', 'dram-0', 'package-1', 'core-1']);
    await reader.begin();
    // Readings between begin and end: the package counter passes max_energy_range_uj and starts again from 0.
    const steps = [start + 250_000, 150_000, 900_000];
    for (const uj of steps.slice(0, 2)) {
      await tree.set('intel-rapl:0', uj);
      await tree.set('intel-rapl:0:2', 5_000 + uj % 1_000_000);
      await reader.poll();
    }
    await tree.set('intel-rapl:0', steps[2]!);
    await tree.set('intel-rapl:0:0', 3_010);
    await tree.set('intel-rapl:1', 61_000);
    await tree.set('intel-rapl:1:0', 20);
    const windows = await reader.end();
    const by = new Map(windows.map((w) => [w.name, w]));
    // By hand: 250000 before the wrap, then (max - (start + 250000)) + 150000 across it, then 750000.
    const handPackageUj = 250_000 + (MAX_RANGE_UJ - (start + 250_000)) + 150_000 + (900_000 - 150_000);
    expect(by.get('package-0')!.joules).toBe(handPackageUj / 1e6);
    expect(by.get('package-0')!.joules).toBe(1.2);
    expect(by.get('core-0')!.joules).toBe(3_000 / 1e6);
    expect(by.get('package-1')!.joules).toBe(60_000 / 1e6);
    // core-1 never moved: NULL with the reason, never 0; uncore-0 too.
    expect(by.get('core-1')!.joules).toBeNull();
    expect(by.get('core-1')!.reason).toMatch(/did not move/);
    expect(by.get('uncore-0')!.joules).toBeNull();
    // Only package and dram are counted: core and uncore are inside package.
    expect(windows.filter((w) => w.counted).map((w) => w.name)).toEqual(['package-0', 'dram-0', 'package-1']);
    // A static tree never shows an update, so the documented period stands and ticks follow from the window.
    expect(by.get('package-0')!.updatePeriodS).toBe(RAPL_DOCUMENTED_PERIOD_S);
    expect(by.get('package-0')!.ticks).toBe(Math.floor(by.get('package-0')!.seconds / RAPL_DOCUMENTED_PERIOD_S));
  });

  it('a socket without a dram zone has no dram domain; an unreadable or foreign energy_uj is NULL naming the file', async () => {
    const tree = await powercapTree([
      { id: 'intel-rapl:0', name: 'package-0', energyUj: 100 },
      { id: 'intel-rapl:0:0', name: 'dram', energyAs: 'folder' },
      { id: 'intel-rapl:1', name: 'package-1', energyUj: 100 },
      { id: 'intel-rapl:1:0', name: 'dram', energyAs: 'not a number\n' },
    ]);
    const reader = await open(tree.root);
    await reader.begin();
    await tree.set('intel-rapl:0', 2_100);
    await tree.set('intel-rapl:1', 4_100);
    const by = new Map((await reader.end()).map((w) => [w.name, w]));
    expect([...by.keys()].sort()).toEqual(['dram-0', 'dram-1', 'package-0', 'package-1']);
    expect(by.get('package-0')!.joules).toBe(0.002);
    expect(by.get('dram-0')!.joules).toBeNull();
    expect(by.get('dram-0')!.reason).toContain(tree.energyFile('intel-rapl:0:0'));
    expect(by.get('dram-1')!.reason).toMatch(/a whole number of microjoules/);
  });

  it('a counter whose file disappears mid-session is NULL for that session with the file named', async () => {
    const tree = await powercapTree([{ id: 'intel-rapl:0', name: 'package-0', energyUj: 100 }]);
    const reader = await open(tree.root);
    await reader.begin();
    await rm(tree.energyFile('intel-rapl:0'));
    const [w] = await reader.end();
    expect(w!.joules).toBeNull();
    expect(w!.reason).toMatch(/is missing/);
  });

  it.skipIf(process.getuid?.() === 0)('an energy_uj readable by root only says so and how to grant access', async () => {
    const tree = await powercapTree([{ id: 'intel-rapl:0', name: 'package-0', energyUj: 100 }]);
    await chmod(tree.energyFile('intel-rapl:0'), 0o400);
    const opened = await raplPlugin(tree.root).open();
    expect('unavailable' in opened && opened.unavailable).toMatch(/root only.*chmod o\+r/);
  });

  it('no powercap folder, or one without RAPL zones, is unavailable with the reason', async () => {
    const missing = await raplPlugin('/nonexistent/powercap').open();
    expect('unavailable' in missing && missing.unavailable).toMatch(/is absent/);
    const empty = await powercapTree([]);
    const none = await raplPlugin(empty.root).open();
    expect('unavailable' in none && none.unavailable).toMatch(/no intel-rapl zone/);
    const folder = await powercapTree([{ id: 'intel-rapl:0', name: 'package-0', energyAs: 'folder' }]);
    const unreadable = await raplPlugin(folder.root).open();
    expect('unavailable' in unreadable && unreadable.unavailable).toContain(path.join(folder.root, 'intel-rapl:0', 'energy_uj'));
  });
});
