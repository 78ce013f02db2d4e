import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Every file, folder and link under a root, by path relative to it: content hash, "dir", "special" (a FIFO is never read) or the link's target. */
export type TreeSnapshot = Map<string, string>;

export function sha256File(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** `skip` names paths (relative to root) left out with everything below them: the files a command may change. */
export function snapshotTree(root: string, skip: string[] = []): TreeSnapshot {
  const snapshot: TreeSnapshot = new Map();
  const skipped = new Set(skip.map((p) => path.normalize(p)));
  const walk = (relative: string): void => {
    for (const name of readdirSync(path.join(root, relative)).sort()) {
      const entry = path.join(relative, name);
      if (skipped.has(entry)) continue;
      const full = path.join(root, entry);
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) snapshot.set(entry, `link ${readlinkSync(full)}`);
      else if (stat.isDirectory()) {
        snapshot.set(entry, 'dir');
        walk(entry);
      } else if (!stat.isFile()) snapshot.set(entry, 'special');
      else snapshot.set(entry, sha256File(full));
    }
  };
  if (existsSync(root)) walk('');
  return snapshot;
}

/** Paths added, removed or changed between two snapshots, each with what happened to it. */
export function changedPaths(before: TreeSnapshot, after: TreeSnapshot): string[] {
  const changes: string[] = [];
  for (const [entry, value] of after) {
    const old = before.get(entry);
    if (old === undefined) changes.push(`added ${entry}`);
    else if (old !== value) changes.push(`changed ${entry}`);
  }
  for (const entry of before.keys()) if (!after.has(entry)) changes.push(`removed ${entry}`);
  return changes.sort();
}
