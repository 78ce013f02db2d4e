import { openStore, type ProfileStore } from '@pbh/core';
import { z } from 'zod';

/** The database the site is built from: set by `pbh site build --db` (and defaulted in astro.config.mjs). */
export function siteDbPath(): string {
  const path = process.env.PBH_SITE_DB;
  if (!path) {
    throw new Error('PBH_SITE_DB is not set: build the site with `pbh site build --db results/pbh.duckdb` (or npm run site).');
  }
  return path;
}

let opened: Promise<ProfileStore> | undefined;

/**
 * One read-only handle for the whole build. Read-only is what lets the build run beside other
 * readers; a running `pbh run` still holds the file, and openStore then throws StoreLockedError,
 * which names the file and says to wait or to build from a copy.
 */
export function siteStore(): Promise<ProfileStore> {
  opened ??= openStore(siteDbPath(), { readOnly: true });
  return opened;
}

/** Runs one read query and validates every row: what crosses from the database into pages is checked. */
export async function selectRows<S extends z.ZodType>(sql: string, schema: S): Promise<z.output<S>[]> {
  const store = await siteStore();
  return store.withConnection(async (connection) => {
    const reader = await connection.runAndReadAll(sql);
    return reader.getRowObjectsJS().map((row, index) => {
      const parsed = schema.safeParse(row);
      if (!parsed.success) {
        throw new Error(
          `Row ${index} of a site query on ${store.file} has an unexpected shape (${z.prettifyError(parsed.error)}). ` +
            `The database may come from another pbh version; rebuild it with this one or report the message.\nQuery: ${sql}`,
        );
      }
      return parsed.data;
    });
  });
}
