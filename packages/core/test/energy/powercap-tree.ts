import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The kernel's real max_energy_range_uj on many Intel servers (a 32-bit counter of 61 µJ units). */
export const MAX_RANGE_UJ = 262143328850;

export interface TreeZone {
  /** intel-rapl:0, intel-rapl:0:2, intel-rapl-mmio:0 */
  id: string;
  name: string;
  energyUj?: number;
  /** Written in place of energy_uj: a folder (unreadable as a file) or text that is not a number. */
  energyAs?: 'folder' | string;
}

/**
 * A powercap tree as the kernel lays it out (Documentation/power/powercap/powercap.rst): zones live under
 * devices/virtual/powercap/intel-rapl/, subzones inside their parent, and class/powercap holds a link to each.
 */
export async function powercapTree(zones: TreeZone[]): Promise<{ root: string; energyFile: (id: string) => string; set: (id: string, uj: number) => Promise<void> }> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'pbh-powercap-'));
  const devices = path.join(base, 'devices', 'virtual', 'powercap');
  const root = path.join(base, 'class', 'powercap');
  await mkdir(root, { recursive: true });
  const dirOf = (id: string): string => {
    const control = id.startsWith('intel-rapl-mmio') ? 'intel-rapl-mmio' : 'intel-rapl';
    const parts = id.split(':');
    return parts.length === 3 ? path.join(devices, control, `${parts[0]}:${parts[1]}`, id) : path.join(devices, control, id);
  };
  for (const control of ['intel-rapl', 'intel-rapl-mmio']) {
    await mkdir(path.join(devices, control), { recursive: true });
    await writeFile(path.join(devices, control, 'enabled'), '1\n');
    await symlink(path.join(devices, control), path.join(root, control));
  }
  for (const z of zones) {
    const dir = dirOf(z.id);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'name'), `${z.name}\n`);
    await writeFile(path.join(dir, 'max_energy_range_uj'), `${MAX_RANGE_UJ}\n`);
    await writeFile(path.join(dir, 'enabled'), '1\n');
    if (z.energyAs === 'folder') await mkdir(path.join(dir, 'energy_uj'));
    else if (z.energyAs !== undefined) await writeFile(path.join(dir, 'energy_uj'), z.energyAs);
    else if (z.energyUj !== undefined) await writeFile(path.join(dir, 'energy_uj'), `${z.energyUj}\n`);
    await symlink(dir, path.join(root, z.id));
  }
  const energyFile = (id: string): string => path.join(root, id, 'energy_uj');
  return { root, energyFile, set: (id, uj) => writeFile(energyFile(id), `${uj}\n`) };
}
