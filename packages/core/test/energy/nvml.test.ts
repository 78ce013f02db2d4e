import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { nvmlPlugin, type EnergyReader } from '../../src/energy/index.js';
import { summarizeEnergy } from '../../src/energy/summary.js';

const DOUBLE = path.join(import.meta.dirname, 'pynvml-double');
const opened: EnergyReader[] = [];

/** The real sidecar in the project venv's python, with the double ahead of nvidia-ml-py on PYTHONPATH. */
async function withFake(config: unknown): Promise<Awaited<ReturnType<ReturnType<typeof nvmlPlugin>['open']>>> {
  process.env.FAKE_NVML = JSON.stringify(config);
  try {
    const result = await nvmlPlugin({ pythonPath: [DOUBLE] }).open();
    if ('reader' in result) opened.push(result.reader);
    return result;
  } finally {
    delete process.env.FAKE_NVML;
  }
}

afterEach(async () => {
  for (const r of opened.splice(0)) await r.close();
});

describe('NVML through nvidia-ml-py (a test double of pynvml) in the venv', () => {
  it('reads the total energy counter where the GPU has one, power samples where it has not', async () => {
    const result = await withFake({ devices: [{ name: 'Fake V100', watts: 250, energy_period_s: 0.02 }, { name: 'Fake P4', watts: 60, energy_period_s: null }] });
    if (!('reader' in result)) throw new Error(result.unavailable);
    const reader = result.reader;
    await reader.begin([process.pid]);
    await sleep(600);
    const [v100, p4] = await reader.end();
    expect(v100).toMatchObject({ name: 'gpu-0', method: 'nvml_energy', device: 'gpu', counted: true });
    // The counter moves in steps of one period: within one step (5 J at 250 W) of watts x seconds at each end, plus
    // what a busy host's scheduler puts between the sampler's clock and its NVML call (50 ms allowed).
    expect(Math.abs(v100!.joules! - 250 * v100!.seconds)).toBeLessThanOrEqual(250 * (2 * 0.02 + 0.05));
    // Ticks are the updates the sampler saw: never more than the counter made, and (sampling every 10 ms) most of them.
    expect(v100!.ticks!).toBeLessThanOrEqual(Math.ceil(v100!.seconds / 0.02) + 1);
    expect(v100!.ticks!).toBeGreaterThanOrEqual(Math.floor(v100!.seconds / 0.02 / 2));
    expect(v100!.updatePeriodS!).toBeGreaterThan(0.015);
    expect(v100!.updatePeriodS!).toBeLessThan(0.05);
    expect(v100!.fallback?.method).toBe('nvml_power');
    // Constant power integrates to watts x seconds; the sidecar's clock spans the window.
    expect(p4).toMatchObject({ name: 'gpu-1', method: 'nvml_power' });
    expect(p4!.joules!).toBeCloseTo(60 * p4!.seconds, 6);
    expect(p4!.reason).toMatch(/Not Supported/);
  }, 30_000);

  it('a window too short for the counter\'s min_ticks falls back to power samples, saying why', async () => {
    const result = await withFake({ devices: [{ name: 'Fake A100', watts: 300, energy_period_s: 0.1 }] });
    if (!('reader' in result)) throw new Error(result.unavailable);
    await result.reader.begin([process.pid]);
    await sleep(250);
    const windows = await result.reader.end();
    const energy = summarizeEnergy([{ index: 0, windows, problems: [] }], [100], { minTicks: 20, unavailable: [], tdp: null }, null);
    const gpu = energy.domains.find((d) => d.name === 'gpu-0')!;
    expect(gpu.method).toBe('nvml_power');
    expect(gpu.reason).toMatch(/fewer than min_ticks 20/);
    // Too few power updates too (the double's power never changes): NULL with the reason, never 0.
    expect(gpu.joules).toBeNull();
    expect(energy.joules_per_sample).toBeNull();
    expect(energy.reason).toMatch(/no total/);
  }, 30_000);

  it('no NVML library is unavailable with NVML\'s own words', async () => {
    const result = await withFake({ init_error: 'LibraryNotFound', devices: [] });
    expect('unavailable' in result && result.unavailable).toMatch(/nvmlInit failed .*NVML Shared Library Not Found/);
  }, 30_000);

  it('the real nvidia-ml-py on a machine without a GPU says so', async () => {
    const result = await nvmlPlugin().open();
    if ('reader' in result) {
      opened.push(result.reader);
      return; // a machine with a GPU: the device check covers it
    }
    expect(result.unavailable).toMatch(/nvmlInit failed|sees no GPU/);
  }, 30_000);
});

describe('a sidecar that has gone before pbh writes to it', () => {
  it('is unavailable, and the write that meets its closed input ends nothing (EPIPE is handled)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pbh-nvml-gone-'));
    mkdirSync(path.join(dir, 'nvml_energy'));
    writeFileSync(path.join(dir, 'nvml_energy', '__init__.py'), '');
    // Closes its stdin, says there is no NVML and lingers, so pbh's quit meets a closed pipe before the exit is seen.
    writeFileSync(path.join(dir, 'nvml_energy', '__main__.py'), 'import json, os, sys, time\nos.close(0)\nprint(json.dumps({"kind": "unavailable", "reason": "no driver"}), flush=True)\ntime.sleep(1)\n');
    const result = await nvmlPlugin({ pythonPath: [dir] }).open();
    expect(result).toEqual({ unavailable: 'no driver' });
    // The EPIPE arrives as an event after the write: give it time to be (un)handled.
    await sleep(300);
  });
});

