import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import si from 'systeminformation';
import type { SystemInfo } from '../contracts/profile.js';
import { HARNESS_VERSION } from '../version.js';
import { PEAK_FORMULA, PEAK_PRECISIONS, opsPerCycle, peakFlops } from './peak.js';

function gitSha(): string | null {
  try {
    const here = path.dirname(fileURLToPath(import.meta.url));
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: here, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() || null;
  } catch {
    return null;
  }
}

function pythonVersion(python: string | undefined): string | null {
  if (!python) return null;
  try {
    return execFileSync(python, ['-c', 'import platform; print(platform.python_version())'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

/**
 * The highest clock the machine reports: cpufreq's cpuinfo_max_freq (kHz) where the kernel exposes it, else
 * systeminformation's maximum, else its base clock; virtual machines often hide both, and /proc/cpuinfo's "cpu MHz"
 * is then the current clock (turbo may run above it).
 */
function clockGhz(siMax: number, siCurrent: number): { ghz: number; source: string } {
  try {
    const khz = Number(readFileSync('/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq', 'utf8').trim());
    if (khz > 0) return { ghz: Math.round(khz / 1e4) / 100, source: 'cpufreq max clock' };
  } catch {
    // No cpufreq (a VM, or not Linux): the next sources.
  }
  if (siMax > 0) return { ghz: siMax, source: 'max clock' };
  if (siCurrent > 0) return { ghz: siCurrent, source: 'base clock' };
  try {
    const mhz = /cpu MHz\s*:\s*([\d.]+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1];
    if (mhz) return { ghz: Math.round(Number(mhz)) / 1000, source: 'current clock from /proc/cpuinfo' };
  } catch {
    // Not Linux: fall through to "unknown".
  }
  return { ghz: 0, source: 'clock unknown' };
}

let cached: Promise<SystemInfo> | undefined;

/** Collected once per process: the machine does not change during a sweep. */
export function collectSystemInfo(opts: { python?: string } = {}): Promise<SystemInfo> {
  cached ??= (async () => {
    const [cpu, flags, mem, osInfo, graphics] = await Promise.all([si.cpu(), si.cpuFlags(), si.mem(), si.osInfo(), si.graphics().catch(() => ({ controllers: [] }))]);
    const { ghz, source } = clockGhz(cpu.speedMax, cpu.speed);
    const physical = cpu.physicalCores || cpu.cores;
    const rates = opsPerCycle(flags);
    return {
      hostname: os.hostname(),
      cpu_vendor: cpu.vendor || cpu.manufacturer,
      cpu_model: `${cpu.manufacturer} ${cpu.brand}`.trim(),
      cpu_cores: cpu.cores,
      cpu_physical_cores: physical,
      cpu_ghz: ghz,
      cpu_flags: flags,
      memory_bytes: mem.total,
      gpus: graphics.controllers.map((g) => ({ vendor: g.vendor, model: g.model, vram_mb: g.vram ?? null })),
      os: `${osInfo.distro} ${osInfo.release}`.trim(),
      kernel: osInfo.kernel,
      arch: osInfo.arch,
      node_version: process.version,
      python_version: pythonVersion(opts.python),
      harness_version: HARNESS_VERSION,
      git_sha: gitSha(),
      peak_flops: peakFlops(physical, ghz, flags),
      // peak_flops is fp32's; each Profile is judged against its executed precision's (Profile.peak).
      peak_flops_formula: `${PEAK_FORMULA}; here ${physical} x ${ghz} GHz (${source}) x ${rates.fp32.perCycle} (${rates.fp32.isa}); per cycle ${PEAK_PRECISIONS.map((p) => `${p} ${rates[p].perCycle} (${rates[p].isa})`).join(', ')}`,
    };
  })();
  return cached;
}
