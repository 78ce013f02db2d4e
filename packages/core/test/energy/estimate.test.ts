import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseCpuModel, processCpuTicks, resolveTdp, TdpEstimateReader, TDP_TABLE, tdpRowFor } from '../../src/energy/index.js';

/** A /proc/PID/stat line as the kernel writes it: pid (comm) state ppid ... utime stime ... */
const statLine = (pid: number, utime: number, stime: number): string =>
  `${pid} (node (worker) 1) S 1 ${pid} ${pid} 0 -1 4194304 500 0 0 0 ${utime} ${stime} 0 0 20 0 11 0 100 1000000 2000 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n`;

async function procTree(stats: Record<number, [number, number]>): Promise<{ root: string; set: (pid: number, u: number, s: number) => Promise<void> }> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'pbh-proc-'));
  const set = async (pid: number, u: number, s: number): Promise<void> => {
    await mkdir(path.join(root, String(pid)), { recursive: true });
    await writeFile(path.join(root, String(pid), 'stat'), statLine(pid, u, s));
  };
  for (const [pid, [u, s]] of Object.entries(stats)) await set(Number(pid), u, s);
  return { root, set };
}

describe('the TDP estimate', () => {
  it('charges the measured processes\' CPU ticks at the TDP per logical CPU, as by hand', async () => {
    const proc = await procTree({ 100: [1_000, 200], 200: [50, 5] });
    expect(await processCpuTicks(100, proc.root)).toBe(1_200);
    const tdp = { watts: 270, threads: 64, watts_per_thread: 270 / 64, source: 'user' as const, entry: null };
    const reader = new TdpEstimateReader(tdp, 100, proc.root);
    await reader.begin([100, 200, 100]);
    await proc.set(100, 1_050, 230); // +80 ticks
    await proc.set(200, 320, 5); // +270 ticks
    const [w] = await reader.end();
    // 350 ticks at 100 per second are 3.5 CPU seconds; 270 W over 64 threads is 4.21875 W each: 14.765625 J.
    expect(w!.ticks).toBe(350);
    expect(w!.joules).toBe(14.765625);
    expect(w!.method).toBe('estimated_tdp');
    expect(w!.updatePeriodS).toBe(0.01);
  });

  it('a process that used no tick is NULL with the reason, and one that vanished says so', async () => {
    const proc = await procTree({ 300: [10, 10] });
    const tdp = { watts: 100, threads: 10, watts_per_thread: 10, source: 'user' as const, entry: null };
    const reader = new TdpEstimateReader(tdp, 100, proc.root);
    await reader.begin([300]);
    const [idle] = await reader.end();
    expect(idle!.joules).toBeNull();
    expect(idle!.reason).toMatch(/less than one CPU clock tick/);
    await reader.begin([300, 999]);
    const [gone] = await reader.end();
    expect(gone!.joules).toBeNull();
    expect(gone!.reason).toMatch(/\/proc\/999\/stat|999\/stat/);
  });
});

describe('the TDP table', () => {
  it('finds a CPU by its model as the kernel and systeminformation print it, and never a longer model number by a prefix', () => {
    expect(tdpRowFor('Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz')?.name).toBe('Xeon Platinum 8375C');
    expect(tdpRowFor('AMD EPYC 7763 64-Core Processor')?.name).toBe('EPYC 7763');
    expect(tdpRowFor('Intel Xeon® Platinum 8480+')?.name).toBe('Xeon Platinum 8480+');
    expect(tdpRowFor('AMD EPYC 77630')).toBeUndefined();
    expect(normaliseCpuModel('Intel(R) Xeon(R) Processor')).toBe('xeon');
  });

  it('a row gives watts over its threads; the user\'s watts win; a masked model takes the vendor median, labelled default', () => {
    const row = resolveTdp('AMD EPYC 7763 64-Core Processor', 'AuthenticAMD', 2, { watts: null, threads: null });
    expect(row).toMatchObject({ watts: 280, threads: 128, watts_per_thread: 280 / 128, source: 'table' });
    const user = resolveTdp('Intel(R) Xeon(R) Processor', 'GenuineIntel', 2, { watts: 350, threads: 112 });
    expect(user).toMatchObject({ watts: 350, threads: 112, watts_per_thread: 350 / 112, source: 'user' });
    const masked = resolveTdp('Intel(R) Xeon(R) Processor', 'GenuineIntel', 2, { watts: null, threads: null });
    const intel = TDP_TABLE.filter((r) => r.vendor === 'intel').map((r) => r.watts / r.threads).sort((a, b) => a - b);
    const median = intel.length % 2 ? intel[(intel.length - 1) / 2]! : (intel[intel.length / 2 - 1]! + intel[intel.length / 2]!) / 2;
    expect(masked).toMatchObject({ source: 'default', threads: 2, watts_per_thread: median, watts: median * 2 });
    expect('unavailable' in resolveTdp('ARMv8 Neoverse', 'ARM', 4, { watts: null, threads: null })).toBe(true);
  });
});
