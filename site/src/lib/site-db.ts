import { SITE_BUILD_LOCKED_EXIT, StoreLockedError } from '@pbh/core';

/** The database the site is built from: set by `pbh site build --db` (and defaulted in astro.config.ts). */
export function siteDbPath(): string {
  const path = process.env.PBH_SITE_DB;
  if (!path) {
    throw new Error('PBH_SITE_DB is not set: build the site with `pbh site build --db results/pbh.duckdb` (or npm run site).');
  }
  return path;
}

/**
 * A store held by a running `pbh run` is not a broken build: say so and leave with the exit status
 * that `pbh site build` turns into its "wait, or build from a copy" advice. Anything else is left to
 * the caller.
 */
export function exitIfStoreLocked(error: unknown): void {
  if (!(error instanceof StoreLockedError)) return;
  process.stderr.write(`${error.message}\n`);
  process.exit(SITE_BUILD_LOCKED_EXIT);
}
