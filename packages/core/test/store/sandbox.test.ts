import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryError, openStore, runSandboxedQuery, type ProfileStore } from '../../src/store/index.js';
import { makeProfile, runStart, tempDir } from './profile-fixture.js';

let dir: string;
let file: string;
let cleanup: () => void;

beforeAll(async () => {
  const temp = tempDir();
  dir = temp.dir;
  cleanup = temp.cleanup;
  file = join(dir, 'pbh.duckdb');
  const writer = await openStore(file);
  await writer.beginRun(runStart('run-1'));
  await writer.writeProfile(makeProfile({ profileId: 'ort', runId: 'run-1', engine: 'onnxruntime', batchesPerSession: 2 }));
  await writer.close();
  writeFileSync(join(dir, 'local.csv'), 'a,b\n1,2\n');
});
afterAll(() => cleanup());

/** Runs SQL on the store's own connection, past runSandboxedQuery's statement check: what DuckDB's settings alone allow. */
async function raw(store: ProfileStore, sql: string): Promise<string> {
  return store.withConnection(async (connection) => {
    try {
      const reader = await connection.runAndReadAll(sql);
      return `ok ${JSON.stringify(reader.getRowsJson())}`;
    } catch (error) {
      return (error as Error).message.split('\n')[0] ?? '';
    }
  });
}

describe('a sandboxed store: the DuckDB settings themselves (@duckdb/node-api 1.5)', () => {
  let store: ProfileStore;
  beforeAll(async () => {
    store = await openStore(file, { readOnly: true, sandbox: { readLocalFiles: false } });
  });
  afterAll(async () => store.close());

  it('has external access, extension installs and loads and community extensions off, and the configuration locked', async () => {
    const settings = await raw(
      store,
      `SELECT current_setting('enable_external_access'), current_setting('autoinstall_known_extensions'),
              current_setting('autoload_known_extensions'), current_setting('allow_community_extensions'),
              current_setting('lock_configuration'), current_setting('access_mode')`,
    );
    expect(settings).toBe('ok [[false,false,false,false,true,"read_only"]]');
  });

  it('enable_external_access=false refuses COPY TO, EXPORT, ATTACH, INSTALL and reading files or URLs', async () => {
    const refused = /^Permission Error: .*disabled (by|through) configuration/;
    for (const sql of [
      `COPY (SELECT 'pwned') TO '${file}'`,
      `COPY (SELECT 1) TO '${join(dir, 'out.csv')}'`,
      `EXPORT DATABASE '${join(dir, 'exported')}'`,
      `ATTACH '${join(dir, 'other.duckdb')}' AS other`,
      'INSTALL httpfs',
      `SELECT * FROM read_csv('${join(dir, 'local.csv')}')`,
      `SELECT * FROM read_text('/etc/passwd')`,
      `SELECT * FROM glob('${dir}/*')`,
      `SELECT * FROM read_parquet('https://example.com/x.parquet')`,
    ]) {
      expect(await raw(store, sql), sql).toMatch(refused);
    }
    expect(await raw(store, 'LOAD httpfs')).toMatch(/^Permission Error: Loading external extensions is disabled/);
    for (const name of ['out.csv', 'exported', 'other.duckdb']) expect(existsSync(join(dir, name)), name).toBe(false);
  });

  it('lock_configuration refuses every SET, the security settings included', async () => {
    for (const sql of ['SET enable_external_access = true', 'SET autoinstall_known_extensions = true', 'SET threads = 1', `SET profiling_output = '${join(dir, 'p.json')}'`]) {
      expect(await raw(store, sql), sql).toMatch(/the configuration has been locked/);
    }
  });
});

describe('runSandboxedQuery', () => {
  it('runs SELECT and refuses every other kind of statement before DuckDB binds it', async () => {
    const store = await openStore(file, { readOnly: true, sandbox: { readLocalFiles: true } });
    try {
      expect((await runSandboxedQuery(store, `SELECT count(*)::INTEGER AS n FROM read_csv('${join(dir, 'local.csv')}')`)).rows).toEqual([[1]]);
      // With external access on, binding EXPORT DATABASE would create its folder: the parse-only check stops it first.
      for (const sql of [`EXPORT DATABASE '${join(dir, 'exp')}'`, `COPY (SELECT 1) TO '${join(dir, 'c.csv')}'`, 'INSTALL httpfs', 'PRAGMA enable_profiling', 'SELECT 1; DELETE FROM runs']) {
        await expect(runSandboxedQuery(store, sql), sql).rejects.toThrow(/Refused: pbh query runs reading statements only/);
      }
      expect(existsSync(join(dir, 'exp'))).toBe(false);
      expect(existsSync(join(dir, 'c.csv'))).toBe(false);
      await expect(runSandboxedQuery(store, `SELECT * FROM read_parquet('https://example.com/x.parquet')`)).rejects.toThrow(/needs a DuckDB extension that is not built in/);
      await expect(runSandboxedQuery(store, 'SELEC 1')).rejects.toThrow(/Query failed on .*syntax error/);
      await expect(runSandboxedQuery(store, ';')).rejects.toThrow(/holds no statement/);
    } finally {
      await store.close();
    }
  });

  it('needs a sandboxed store, and a sandbox needs a read-only open', async () => {
    const plain = await openStore(file, { readOnly: true });
    await expect(runSandboxedQuery(plain, 'SELECT 1')).rejects.toBeInstanceOf(QueryError);
    await plain.close();
    await expect(openStore(file, { sandbox: { readLocalFiles: false } })).rejects.toThrow(/readOnly: true/);
  });
});
