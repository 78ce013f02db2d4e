import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { HARNESS_VERSION } from '../version.js';
import { UsageError } from './command.js';
import { isRunning } from '../system/process-alive.js';

/** The file pbh site build leaves in every site it builds: a folder holding it is one pbh may replace. */
export const SITE_MARKER = '.pbh-site';

// No local paths in it: the marker is published with the site.
const SiteMarkerSchema = z.object({ written_by: z.literal('pbh site build'), pbh_version: z.string(), built_at: z.string() });

/** Absolute path with symlinks in its existing part resolved, so a database reached through a link is still found inside --out. */
function realPath(target: string): string {
  const absolute = path.resolve(target);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = path.dirname(absolute);
  return parent === absolute ? absolute : path.join(realPath(parent), path.basename(absolute));
}

function isInside(child: string, folder: string): boolean {
  const relative = path.relative(folder, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function hasMarker(folder: string): boolean {
  const marker = path.join(folder, SITE_MARKER);
  if (!existsSync(marker) || !statSync(marker).isFile()) return false;
  try {
    return SiteMarkerSchema.safeParse(JSON.parse(readFileSync(marker, 'utf8'))).success;
  } catch {
    return false;
  }
}

function listed(entries: string[]): string {
  const shown = entries.slice(0, 5).join(', ');
  return entries.length > 5 ? `${shown} and ${entries.length - 5} more` : shown;
}

/**
 * A site folder pbh site build may write: the real path of --out, checked before anything is built. It refuses an
 * --out holding the database and a non-empty folder that pbh did not build (no valid marker), so building a site
 * never deletes a file it did not write. `owned` names a folder that is PBH's own whatever it holds (the site
 * package's dist/, built by versions of pbh that wrote no marker).
 */
export function checkSiteFolder(out: string, db: string, owned: string): string {
  const folder = realPath(out);
  const database = realPath(db);
  if (isInside(database, folder)) {
    throw new UsageError(
      `--out ${out} holds the database ${db}: pbh site build replaces its whole --out folder, so the database would go with it. ` +
        `Build into a folder that does not contain the database, e.g. --out ${path.join(path.dirname(folder), 'pbh-site')}.`,
    );
  }
  if (!existsSync(folder)) return folder;
  if (!statSync(folder).isDirectory()) {
    throw new UsageError(`--out ${out} is a file, not a folder. pbh site build writes a folder: pass --out with a new folder's path.`);
  }
  const entries = readdirSync(folder);
  if (entries.length > 0 && !hasMarker(folder) && folder !== realPath(owned)) {
    throw new UsageError(
      `--out ${out} is not empty and was not built by pbh site build (it has no ${SITE_MARKER} file); it holds ${listed(entries)}. ` +
        `pbh site build replaces the folder it builds, so it writes only into a new or empty folder or one it built before. ` +
        `Pass --out with another folder, or empty ${out} yourself if nothing in it is needed.`,
    );
  }
  return folder;
}

/**
 * Staging and set-aside folders of builds that were killed (SIGKILL, a crash) before they could remove them: pbh
 * made them, their pid names a process that is gone, and nothing else in them is anyone's.
 */
function removeAbandoned(folder: string): void {
  const parent = path.dirname(folder);
  const prefix = `.${path.basename(folder)}.pbh-`;
  for (const entry of readdirSync(parent)) {
    const pid = entry.startsWith(prefix) ? /^(?:build|old)-(\d+)-[0-9a-f]{8}$/.exec(entry.slice(prefix.length))?.[1] : undefined;
    if (pid !== undefined && Number(pid) !== process.pid && !isRunning(Number(pid))) rmSync(path.join(parent, entry), { recursive: true, force: true });
  }
}

/**
 * A fresh folder beside the site folder to build into: a failed or interrupted build never touches the old site.
 * Folders that killed builds left there are removed first.
 */
export function stagingFolder(folder: string): string {
  const parent = path.dirname(folder);
  mkdirSync(parent, { recursive: true });
  removeAbandoned(folder);
  const staging = path.join(parent, `.${path.basename(folder)}.pbh-build-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(staging);
  return staging;
}

export function removeStaging(staging: string): void {
  rmSync(staging, { recursive: true, force: true });
}

/**
 * Marks the built staging folder as pbh's and puts it where the site goes. A missing or empty site folder is replaced
 * by one rename, which is atomic (rename(2) replaces an empty directory); an old site is renamed aside first, then
 * removed, and put back if the second rename fails, so the folder holds the old site or the new one, never a mix.
 */
export function publishStaging(staging: string, folder: string): void {
  const marker = { written_by: 'pbh site build', pbh_version: HARNESS_VERSION, built_at: new Date().toISOString() };
  writeFileSync(path.join(staging, SITE_MARKER), `${JSON.stringify(marker, null, 2)}\n`);
  if (!existsSync(folder) || readdirSync(folder).length === 0) {
    renameSync(staging, folder);
    return;
  }
  const old = path.join(path.dirname(folder), `.${path.basename(folder)}.pbh-old-${process.pid}-${randomBytes(4).toString('hex')}`);
  renameSync(folder, old);
  try {
    renameSync(staging, folder);
  } catch (error) {
    renameSync(old, folder);
    throw error;
  }
  rmSync(old, { recursive: true, force: true });
}
