import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { z } from 'zod';

const LockedSchema = z.object({ code: z.literal('ELOCKED') });

/** In the temporary folder, named for the project (Astro empties the project's own `.astro/` as it builds). */
export function siteBuildLockPath(siteDir: string): string {
  const id = createHash('sha256').update(path.resolve(siteDir)).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), 'pbh-site-build', `${id}.lock`);
}

/**
 * One `pbh site build` of a site project at a time. Astro writes a static build's server bundle into the project's
 * `.astro/` whenever the output folder is outside the project (it always is: pbh builds beside --out), and removes
 * it after its pages: a second build of the same project meanwhile loses its bundle and fails. So the second waits,
 * saying so. The lock is proper-lockfile's (a folder, its mtime refreshed; stale after 30 s, as after a kill -9).
 * Resolves to the release.
 */
export async function lockSiteBuild(siteDir: string, say: (line: string) => void): Promise<() => Promise<void>> {
  const lockPath = siteBuildLockPath(siteDir);
  mkdirSync(path.dirname(lockPath), { recursive: true });
  const options = {
    lockfilePath: lockPath,
    stale: 30_000,
    update: 5_000,
    onCompromised: (error: Error) => say(`pbh site build: the build lock ${lockPath} was taken over (${error.message}); another build may run at once.`),
  };
  try {
    return await lockfile.lock(siteDir, options);
  } catch (error) {
    if (!LockedSchema.safeParse(error).success) throw error;
  }
  say(`pbh site build: another build of ${siteDir} is running; this one starts when it ends (Astro builds one site project at a time).`);
  return lockfile.lock(siteDir, { ...options, retries: { forever: true, minTimeout: 200, maxTimeout: 1000 } });
}
