import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { StoreSchemaError } from './errors.js';
import { currentSchemaVersion, LATEST_SCHEMA_VERSION } from './migrations.js';
import { openStore, type ProfileStore } from './store.js';

async function schemaVersionOf(file: string): Promise<number | null> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  try {
    const connection = await instance.connect();
    try {
      return await currentSchemaVersion(connection);
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/**
 * Opens a database written elsewhere (a sweep's shard) for reading, without changing it. A read-only open needs the
 * schema this pbh reads; a shard written by an older pbh (pbh upgraded while the sweep ran) is copied to a temporary
 * folder and the copy migrated, so the shard itself stays as its task left it. A newer schema is still refused.
 * `release` closes the store and removes any copy.
 */
export async function openShardForReading(file: string): Promise<{ store: ProfileStore; release: () => Promise<void> }> {
  try {
    const store = await openStore(file, { readOnly: true });
    return { store, release: () => store.close() };
  } catch (error) {
    if (!(error instanceof StoreSchemaError)) throw error;
    const version = await schemaVersionOf(file);
    if (version === null || version === 0 || version >= LATEST_SCHEMA_VERSION) throw error;
    const dir = mkdtempSync(join(tmpdir(), 'pbh-shard-'));
    const copy = join(dir, basename(file));
    try {
      copyFileSync(file, copy);
      if (existsSync(`${file}.wal`)) copyFileSync(`${file}.wal`, `${copy}.wal`);
      const store = await openStore(copy);
      return {
        store,
        release: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (copyError) {
      rmSync(dir, { recursive: true, force: true });
      throw copyError;
    }
  }
}
