import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import si from 'systeminformation';
import type { SystemInfo } from '../contracts/profile.js';
import { HARNESS_VERSION } from '../version.js';
import { PEAK_FORMULA, flopsPerCycle, peakFlops } from './peak.js';

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

let cached: Promise<SystemInfo> | undefined;

/** Collected once per process: the machine does not change during a sweep. */
export function collectSystemInfo(opts: { python?: string } = {}): Promise<SystemInfo> {
  cached ??= (async () => {
    const [cpu, flags, mem, osInfo, graphics] = await Promise.all([si.cpu(), si.cpuFlags(), si.mem(), si.osInfo(), si.graphics().catch(() => ({ controllers: [] }))]);
    const ghz = cpu.speedMax || cpu.speed || (os.cpus()[0]?.speed ?? 0) / 1000;
    const physical = cpu.physicalCores || cpu.cores;
    const { isa } = flopsPerCycle(flags);
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
      peak_flops_formula: `${PEAK_FORMULA}; here ${physical} x ${ghz} GHz x ${flopsPerCycle(flags).perCycle} (${isa})`,
    };
  })();
  return cached;
}
