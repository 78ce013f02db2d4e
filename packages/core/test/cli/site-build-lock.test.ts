import { mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockSiteBuild, siteBuildLockPath } from '../../src/cli/site-build-lock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function siteDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pbh-site-lock-'));
  dirs.push(dir);
  return dir;
}

describe('lockSiteBuild: one pbh site build of a site project at a time', () => {
  it('makes a second build wait, says so, and lets it start when the first ends', async () => {
    const dir = siteDir();
    const said: string[] = [];
    const releaseFirst = await lockSiteBuild(dir, (line) => said.push(line));
    expect(said).toEqual([]);
    let second: (() => Promise<void>) | undefined;
    const waiting = lockSiteBuild(dir, (line) => said.push(line)).then((release) => (second = release));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(second).toBeUndefined();
    expect(said).toEqual([expect.stringContaining(`another build of ${dir} is running`)]);
    await releaseFirst();
    await waiting;
    expect(second).toBeTypeOf('function');
    await second!();
  });

  it('takes over a lock left by a build that was killed (stale after 30 s)', async () => {
    const dir = siteDir();
    const lock = siteBuildLockPath(dir);
    mkdirSync(lock, { recursive: true });
    const longAgo = new Date(Date.now() - 120_000);
    utimesSync(lock, longAgo, longAgo);
    const said: string[] = [];
    const release = await lockSiteBuild(dir, (line) => said.push(line));
    expect(said).toEqual([]);
    await release();
  });
});
