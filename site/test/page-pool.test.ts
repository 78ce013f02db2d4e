import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundlePageWorker } from '../integrations/pbh-assets.js';
import type { ProfileEntry } from '../src/lib/data.js';
import type { ProfileFilesJob } from '../src/lib/profile-page/files.js';
import { pbh, ROOT } from './cli.js';

// The pool and the data read the environment when first used: the worker is bundled as a build bundles it, then the
// modules are loaded (beforeAll), once the database exists.
const siteDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.env.PBH_SITE_PAGE_WORKER = await bundlePageWorker(siteDir);
delete process.env.PBH_SITE_PAGE_THREADS;
const SUITE = path.join(ROOT, '.cache', 'suite');

let tmp: string;
let entries: ProfileEntry[];
let runConfigHref: (entry: ProfileEntry) => string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pbh-page-pool-test-'));
  const db = path.join(tmp, 'pool.duckdb');
  const config = {
    name: 'page-pool', seed: 0, warmup_batches: 1, sessions: 2,
    dataset: { kind: 'npy', name: 'digits-npy', inputs: { x: path.join(SUITE, 'data', 'digits_x.npy') }, labels: path.join(SUITE, 'data', 'digits_y.npy'), limit: 32 },
    models: [{ name: 'digits_cnn', path: path.join(SUITE, 'models', 'digits_cnn.onnx'), family: 'cnn', framework: 'numpy', weights: 'trained' }],
    engines: [{ name: 'onnxruntime', options: { intraOpNumThreads: 1 } }],
    batch_sizes: [1, 4, 8],
    scorers: ['top1'],
  };
  await writeFile(path.join(tmp, 'pool.json'), JSON.stringify(config));
  const run = await pbh(['run', path.join(tmp, 'pool.json'), '--db', db]);
  if (run.code !== 0) throw new Error(`pbh run failed (${run.code}): ${run.stderr}`);
  process.env.PBH_SITE_DB = db;
  const { siteData } = await import('../src/lib/data.js');
  const configs = await import('../src/lib/run-configs.js');
  const data = await siteData();
  entries = data.profiles;
  runConfigHref = (entry) => configs.runConfigHref(data, entry);
}, 240_000);

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A job writing `entry`'s page and download under `dir`, kept under `keep` where given. */
function job(entry: ProfileEntry, dir: string, keep?: string): ProfileFilesJob {
  mkdirSync(dir, { recursive: true });
  const file = (name: string) => ({ to: path.join(dir, name), keep: keep ? path.join(keep, `kept-${name}`) : null });
  return { entry, runConfig: runConfigHref(entry), page: file(`${entry.slug}.html`), download: file(`${entry.slug}.json.gz`) };
}

const files = (dir: string): Map<string, Buffer> => new Map(readdirSync(dir).sort().map((f) => [f, readFileSync(path.join(dir, f))]));

describe('page pool: Profile pages written on worker threads during a build', () => {
  it('writes the same page and download on a worker as in the calling thread, and keeps them as links', async () => {
    const { profileFilesPool } = await import('../src/lib/profile-page/pool.js');
    const { writeProfileFiles } = await import('../src/lib/profile-page/files.js');
    const [onWorker, inThread, kept] = ['worker', 'thread', 'kept'].map((d) => path.join(tmp, d));
    mkdirSync(kept!, { recursive: true });
    expect(entries.length).toBe(3);
    await Promise.all(entries.map((entry) => profileFilesPool().write(job(entry, onWorker!, kept))));
    for (const entry of entries) await writeProfileFiles(job(entry, inThread!));
    expect(files(onWorker!)).toEqual(files(inThread!));
    expect(files(onWorker!).size).toBe(2 * entries.length);
    const page = readFileSync(path.join(onWorker!, `${entries[0]!.slug}.html`), 'utf8');
    expect(page).toMatch(/^<!DOCTYPE html><html lang="en">/);
    expect(page).toContain('data-chart="ecdf"');
    expect(page).toContain(`<code>${entries[0]!.profile_id}</code>`);
    // Kept by a hard link: the cache's file is the site's, not a second copy.
    const slug = entries[0]!.slug;
    expect(statSync(path.join(kept!, `kept-${slug}.html`)).ino).toBe(statSync(path.join(onWorker!, `${slug}.html`)).ino);
  });

  it('fails a job with the Profile named and the cause, and goes on with the next', async () => {
    const { profileFilesPool } = await import('../src/lib/profile-page/pool.js');
    const broken = { ...entries[0]!, profile: { ...entries[0]!.profile, latency: undefined } } as unknown as ProfileEntry;
    await expect(profileFilesPool().write(job(broken, path.join(tmp, 'broken')))).rejects.toThrow(
      new RegExp(`Profile ${entries[0]!.profile_id}'s page failed on a worker thread: TypeError`),
    );
    const unnamed = { ...job(entries[0]!, path.join(tmp, 'broken')), runConfig: 7 } as unknown as ProfileFilesJob;
    await expect(profileFilesPool().write(unnamed)).rejects.toThrow(/failed on a worker thread: .*runConfig/s);
    await expect(profileFilesPool().write(job(entries[1]!, path.join(tmp, 'after')))).resolves.toBeUndefined();
  });
});
