import type { SystemInfo } from '@pbh/core';
import type { ProfileEntry } from './data.js';
import { slugFor } from './slug.js';

/**
 * A machine is a hardware string (the leaderboard view's `hardware`: CPU model, logical cores, GPUs), what the
 * leaderboard groups by. Its systems rows differ in software (OS, kernel, Node, Python, PBH version and git commit):
 * each is listed, newest first, with what it measured.
 */
export interface Machine {
  hardware: string;
  slug: string;
  /** The newest system record: CPU flags, memory, OS as last seen. */
  latest: SystemInfo;
  /** Distinct software set-ups seen, newest first. */
  software: { system: SystemInfo; profiles: number; first: string; last: string }[];
  /** Engine runtimes and the versions they reported here. */
  runtimes: { engine: string; versions: string[] }[];
  /** Which Profiles: one row a model and engine entry, with counts and the newest Profile. */
  cells: { model: string; entry: string; ok: number; notOk: number; latest: ProfileEntry }[];
  runs: Set<string>;
  profiles: number;
}

export function machineSlug(hardware: string): string {
  return `m-${slugFor(hardware)}`;
}

const softwareKey = (s: SystemInfo): string =>
  [s.hostname, s.os, s.kernel, s.arch, s.node_version, s.python_version, s.harness_version, s.git_sha, s.memory_bytes].join('\u0000');

export function machines(profiles: ProfileEntry[]): Machine[] {
  const byHardware = new Map<string, ProfileEntry[]>();
  for (const p of profiles) byHardware.set(p.hardware, [...(byHardware.get(p.hardware) ?? []), p]);
  return [...byHardware.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([hardware, members]) => {
      const newest = [...members].sort((a, b) => b.created_at.localeCompare(a.created_at));
      const software = new Map<string, Machine['software'][number]>();
      for (const p of newest) {
        const key = softwareKey(p.profile.system);
        const seen = software.get(key);
        if (seen) {
          seen.profiles += 1;
          seen.first = p.created_at;
        } else software.set(key, { system: p.profile.system, profiles: 1, first: p.created_at, last: p.created_at });
      }
      const versions = new Map<string, Set<string>>();
      for (const p of members) versions.set(p.engine_name, (versions.get(p.engine_name) ?? new Set()).add(p.engine_version ?? 'version unknown'));
      const cells = new Map<string, Machine['cells'][number]>();
      for (const p of newest) {
        const key = `${p.model_name}\u0000${p.engine_entry}`;
        const cell = cells.get(key) ?? { model: p.model_name, entry: p.engine_entry, ok: 0, notOk: 0, latest: p };
        if (p.status === 'ok') cell.ok += 1;
        else cell.notOk += 1;
        cells.set(key, cell);
      }
      return {
        hardware,
        slug: machineSlug(hardware),
        latest: newest[0]!.profile.system,
        software: [...software.values()],
        // A cell that failed before its runtime loaded has no version: 'version unknown' only where no Profile knew it.
        runtimes: [...versions.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([engine, v]) => {
          const known = [...v].filter((x) => x !== 'version unknown').sort();
          return { engine, versions: known.length > 0 ? known : ['version unknown'] };
        }),
        cells: [...cells.values()].sort((a, b) => a.model.localeCompare(b.model) || a.entry.localeCompare(b.entry)),
        runs: new Set(members.map((p) => p.run_id)),
        profiles: members.length,
      };
    });
}

/** The CPU features that decide what an engine may execute (bf16, int8 and fp16 paths), picked out of the full flag list. */
export const KEY_FLAGS = ['avx2', 'fma', 'avx512f', 'avx512_bf16', 'avx512_vnni', 'avx512_fp16', 'amx_bf16', 'amx_int8', 'amx_tile', 'avx_vnni', 'neon', 'sve'];
