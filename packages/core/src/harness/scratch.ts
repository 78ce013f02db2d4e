import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { isRunning } from '../system/process-alive.js';

/** Each run's scratch folder says whose it is, so a later run can tell a killed run's leftovers from a live run's. */
const OWNER_FILE = 'owner.json';
const OwnerSchema = z.object({ pid: z.number().int().positive(), run_id: z.string(), db: z.string(), started_at: z.string() });
const SCRATCH = /^pbh-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const scratchFolder = (runId: string): string => path.join(os.tmpdir(), `pbh-${runId}`);

export async function claimScratch(runId: string, dbPath: string): Promise<string> {
  const folder = scratchFolder(runId);
  await mkdir(folder, { recursive: true });
  const owner = { pid: process.pid, run_id: runId, db: path.resolve(dbPath), started_at: new Date().toISOString() };
  await writeFile(path.join(folder, OWNER_FILE), JSON.stringify(owner));
  return folder;
}

/**
 * Removes the scratch folders of runs whose process is gone (a SIGKILL, a crash, a power cut left them) and returns
 * those that wrote into `dbPath`, to be named and closed as killed (the sweep does both): their stored Profiles stay.
 */
export async function removeOrphanScratch(dbPath: string): Promise<{ runId: string; startedAt: string; folder: string }[]> {
  const db = path.resolve(dbPath);
  const orphans: { runId: string; startedAt: string; folder: string }[] = [];
  for (const name of await readdir(os.tmpdir()).catch(() => [])) {
    if (!SCRATCH.test(name)) continue;
    const folder = path.join(os.tmpdir(), name);
    const owner = OwnerSchema.safeParse(await readFile(path.join(folder, OWNER_FILE), 'utf8').then(JSON.parse, () => null));
    if (!owner.success || isRunning(owner.data.pid)) continue;
    await rm(folder, { recursive: true, force: true }).catch(() => undefined);
    if (owner.data.db === db) orphans.push({ runId: owner.data.run_id, startedAt: owner.data.started_at, folder });
  }
  return orphans;
}
