import { closeSync, existsSync, mkdirSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { z } from 'zod';
import { BoundarySchema, ProfileSchema, ProfileStatusSchema, type Profile, type ProfileStatus } from '../contracts/profile.js';
import {
  ReadOnlyStoreError,
  StoreLockedError,
  StoreNotFoundError,
  StoreSchemaError,
  StoreUnreadableError,
  StoreWriteError,
  isLockConflict,
  lockHolderPid,
  messageOf,
} from './errors.js';
import { checkSchemaReadable, currentSchemaVersion, migrate } from './migrations.js';
import { modelRow, pairRatioRows, profileRow, sessionRow, systemRow } from './profile-rows.js';
import { RunStartSchema, type RunEnd, type RunStart } from './run-start.js';
import { insertRow } from './sql-rows.js';
import { generationRow } from './generation-rows.js';

export interface OpenStoreOptions {
  /** Readers open read-only: no migration, no writes, and other readers may open the file too. */
  readOnly?: boolean;
  /**
   * For SQL a person typed (`pbh query`), on a read-only open: DuckDB may not install or load extensions (so no
   * network: httpfs is not built in) nor change its settings, and may touch no file but this database. With
   * `readLocalFiles`, reading functions such as read_csv may read local files; runSandboxedQuery still refuses every
   * statement that is not a SELECT, so nothing is ever written.
   */
  sandbox?: { readLocalFiles: boolean };
}

/**
 * Every open: DuckDB never downloads or loads an extension by itself (no network at run time; what PBH uses, parquet,
 * json and icu, is built in). Without this, a query naming a URL installs httpfs, and opening an SQLite file
 * installs the sqlite scanner.
 */
const NO_EXTENSION_LOADING = { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' };

/**
 * DuckDB settings for a sandboxed open, each checked against @duckdb/node-api 1.5 in core/test/store/sandbox.test.ts:
 * enable_external_access=false fails COPY ... TO, EXPORT DATABASE, ATTACH, INSTALL and every read_* / glob of a
 * file or URL with a Permission Error; with extension autoinstall/autoload off (every open) a query cannot bring
 * in httpfs for a URL; allow_community_extensions=false keeps third-party extensions out. Security settings cannot
 * be raised again once the database runs, and lock_configuration (set after PBH's own SET TimeZone) freezes the rest.
 */
function sandboxSettings(readLocalFiles: boolean): Record<string, string> {
  return { enable_external_access: readLocalFiles ? 'true' : 'false', allow_community_extensions: 'false' };
}

export interface ProfileFilter {
  runId?: string;
  status?: ProfileStatus;
  modelName?: string;
  engineName?: string;
  device?: string;
  batchSize?: number;
  cellKey?: string;
}

export const ProfileSummarySchema = z.object({
  profile_id: z.string(),
  run_id: z.string(),
  cell_key: z.string(),
  created_at: z.date().transform((date) => date.toISOString()),
  status: ProfileStatusSchema,
  error: z.string().nullable(),
  model_name: z.string(),
  engine_name: z.string(),
  engine_version: z.string().nullable(),
  device: z.string(),
  batch_size: z.number().int(),
  throughput_sps: z.number().nullable(),
  predict_p50_ms: z.number().nullable(),
  predict_p99_ms: z.number().nullable(),
});
export type ProfileSummary = z.output<typeof ProfileSummarySchema>;

const SampleColumnsSchema = z.tuple([
  z.array(z.number().int()),
  z.array(z.number().int()),
  z.array(BoundarySchema),
  z.array(z.number()),
]);

/**
 * Files this process has open, by absolute path. DuckDB's lock is per process, so without this a
 * second open in the same process would succeed and two instances would write one file.
 */
const openInThisProcess = new Map<string, { readOnly: boolean; count: number }>();

/** Absolute path with symlinks in the existing part resolved, so two spellings of one file match. */
function canonicalPath(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  return existsSync(parent) ? join(realpathSync(parent), basename(absolute)) : absolute;
}

/**
 * Opens (creating and migrating when read-write) the PBH DuckDB file at `path`.
 * Throws StoreLockedError when another process holds the file, StoreNotFoundError for a missing file opened read-only.
 */
export async function openStore(path: string, options: OpenStoreOptions = {}): Promise<ProfileStore> {
  const readOnly = options.readOnly ?? false;
  const sandbox = options.sandbox;
  if (sandbox !== undefined && !readOnly) throw new Error(`openStore(${path}): a sandboxed store must be opened with readOnly: true.`);
  const file = canonicalPath(path);
  if (readOnly && !existsSync(file)) throw new StoreNotFoundError(file);
  const notAFile = notADatabaseFile(file);
  if (notAFile !== undefined) throw new StoreUnreadableError(file, notAFile);
  if (!readOnly) mkdirSync(dirname(file), { recursive: true });

  const held = openInThisProcess.get(file);
  if (held !== undefined && (!held.readOnly || !readOnly)) throw new StoreLockedError(file, process.pid);
  // Claimed before the first await, so two concurrent opens in this process cannot both pass the check.
  openInThisProcess.set(file, { readOnly, count: (held?.count ?? 0) + 1 });

  let instance: DuckDBInstance;
  try {
    const settings = { ...NO_EXTENSION_LOADING, ...(sandbox === undefined ? {} : sandboxSettings(sandbox.readLocalFiles)) };
    instance = await DuckDBInstance.create(file, readOnly ? { access_mode: 'READ_ONLY', ...settings } : settings);
  } catch (error) {
    releaseClaim(file);
    const message = messageOf(error);
    if (isLockConflict(message)) throw new StoreLockedError(file, lockHolderPid(message), error);
    throw new StoreUnreadableError(file, `DuckDB says ${message.replace(/!$/, '')}`, error);
  }

  let connection: DuckDBConnection | undefined;
  try {
    connection = await instance.connect();
    // Timestamps are stored and shown in UTC whatever the machine's zone, so results read the same everywhere.
    await connection.run(`SET TimeZone = 'UTC'`);
    if (readOnly) await checkSchemaReadable(connection, file);
    else await migrate(connection, file);
    if (sandbox !== undefined) await connection.run('SET lock_configuration = true');
  } catch (error) {
    connection?.closeSync();
    instance.closeSync();
    releaseClaim(file);
    throw error;
  }
  return new ProfileStore(file, readOnly, sandbox !== undefined, instance, connection);
}

/** DuckDB's main header: an 8-byte checksum, then these magic bytes. */
const DUCKDB_MAGIC = Buffer.from('DUCK');
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0');

/**
 * Why an existing path cannot be a PBH database, where its first bytes already say so: DuckDB's own words are vaguer,
 * and for an SQLite file it would reach for the sqlite extension instead.
 */
function notADatabaseFile(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const stat = statSync(file);
  if (stat.isDirectory()) return 'it is a folder, not a file';
  if (stat.size === 0) return 'it is an empty file, not a DuckDB database';
  const head = Buffer.alloc(16);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  if (head.equals(SQLITE_MAGIC)) return 'it is an SQLite database, not a DuckDB one';
  if (!head.subarray(8, 12).equals(DUCKDB_MAGIC)) return 'it is not a DuckDB database file (its first bytes are not a DuckDB header)';
  return undefined;
}

function releaseClaim(file: string): void {
  const held = openInThisProcess.get(file);
  if (held !== undefined && held.count > 1) held.count -= 1;
  else openInThisProcess.delete(file);
}

/** One PBH DuckDB file. Operations run one at a time on one connection, so a Profile's transaction is never interleaved. */
/** What a stored ok Profile says of the cell it measured, for --resume to compare. */
export interface StoredCell {
  fingerprint: string | null;
  modelSha256: string | null;
  datasetSha256: string | null;
  engineVersion: string | null;
}

export class ProfileStore {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | undefined;

  /** Use openStore(). */
  constructor(
    readonly file: string,
    readonly readOnly: boolean,
    /** Opened with OpenStoreOptions.sandbox: the only kind of store runQuery accepts. */
    readonly sandboxed: boolean,
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  /** Runs `work` with the connection once every earlier operation on this store has finished. */
  withConnection<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const result = this.queue.then(() => {
      if (this.closed) throw new Error(`The PBH store ${this.file} is closed; open it again with openStore().`);
      return work(this.connection);
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  async schemaVersion(): Promise<number> {
    return this.withConnection(async (connection) => (await currentSchemaVersion(connection)) ?? 0);
  }

  /** Records a sweep and the system it runs on. Profiles of that run may be written afterwards. */
  async beginRun(run: RunStart): Promise<void> {
    this.assertWritable('beginRun');
    const parsed = RunStartSchema.parse(run);
    const system = systemRow(parsed.system);
    await this.inTransaction(`recording run ${parsed.run_id}`, async (connection) => {
      await insertRow(connection, 'systems', system, true);
      await insertRow(connection, 'runs', {
        run_id: parsed.run_id,
        name: parsed.name,
        started_at: parsed.started_at,
        finished_at: null,
        config: JSON.stringify(parsed.config),
        command: parsed.command,
        harness_version: parsed.system.harness_version,
        git_sha: parsed.system.git_sha,
        system_id: system.system_id ?? null,
      });
    });
  }

  /** Stamps the run's finished_at (now, unless given as an ISO timestamp) and how it ended. */
  async finishRun(runId: string, finishedAt: string = new Date().toISOString(), ended: RunEnd = 'finished'): Promise<void> {
    this.assertWritable('finishRun');
    await this.withConnection(async (connection) => {
      const reader = await connection.runAndReadAll(
        'UPDATE runs SET finished_at = $1::TIMESTAMPTZ, ended = $2 WHERE run_id = $3 RETURNING run_id',
        [finishedAt, ended, runId],
      );
      if (reader.currentRowCount === 0) {
        throw new StoreWriteError(`finishRun: run ${runId} is not in ${this.file}; call beginRun for it first.`);
      }
    });
  }

  /**
   * Closes a run whose process was killed before it finished: ended 'killed', finished_at its last stored Profile's
   * time (else its start). False when the run is not in this file or already closed.
   */
  async closeKilledRun(runId: string): Promise<boolean> {
    this.assertWritable('closeKilledRun');
    return this.withConnection(async (connection) => {
      const reader = await connection.runAndReadAll(
        `UPDATE runs SET ended = 'killed', finished_at = coalesce((SELECT max(created_at) FROM profiles WHERE run_id = $1), started_at)
         WHERE run_id = $1 AND finished_at IS NULL RETURNING run_id`,
        [runId],
      );
      return reader.currentRowCount > 0;
    });
  }

  /**
   * Writes one Profile and its sessions, raw samples, layers and scores in ONE transaction: on any
   * error it rolls back, so the file holds either the whole Profile or none of it.
   */
  async writeProfile(profile: Profile): Promise<void> {
    this.assertWritable('writeProfile');
    const checked = ProfileSchema.safeParse(profile);
    if (!checked.success) {
      throw new StoreWriteError(
        `Profile ${profile.profile_id} (cell ${profile.cell_key}) does not satisfy ProfileSchema, so it was not stored: ` +
          z.prettifyError(checked.error),
      );
    }
    const p = checked.data;
    await this.inTransaction(`storing profile ${p.profile_id} (cell ${p.cell_key})`, async (connection) => {
      const run = await connection.runAndReadAll('SELECT 1 FROM runs WHERE run_id = $1', [p.run_id]);
      if (run.currentRowCount === 0) throw new Error(`its run ${p.run_id} is not recorded: call beginRun for that run first`);
      const existing = await connection.runAndReadAll('SELECT 1 FROM profiles WHERE profile_id = $1', [p.profile_id]);
      if (existing.currentRowCount > 0) throw new Error(`a profile with id ${p.profile_id} is already stored; profile ids must be unique`);

      await insertRow(connection, 'systems', systemRow(p.system), true);
      if (p.model !== null) await insertRow(connection, 'models', modelRow(p.model), true);
      await insertRow(connection, 'profiles', profileRow(p));
      for (const session of p.sessions) await insertRow(connection, 'sessions', sessionRow(p.profile_id, session));
      await appendSamples(connection, p);
      await appendLayers(connection, p);
      for (const [seq, score] of p.scores.entries()) {
        await insertRow(connection, 'scores', { profile_id: p.profile_id, seq, ...score });
      }
      const generation = generationRow(p);
      if (generation) await insertRow(connection, 'generation', generation);
      for (const pair of pairRatioRows(p)) await insertRow(connection, 'pair_ratios', pair);
    });
  }

  /** Cell keys that already have an ok Profile in any run: what `--resume` skips. */
  async okCellKeys(): Promise<Set<string>> {
    return new Set((await this.okCells()).keys());
  }

  /** The newest ok Profile of each cell key: what --resume compares with the cell as it stands now. */
  async okCells(): Promise<Map<string, StoredCell>> {
    return this.withConnection(async (connection) => {
      const reader = await connection.runAndReadAll(
        `SELECT cell_key, json_extract_string(profile_json, '$.cell_fingerprint'), json_extract_string(profile_json, '$.model.sha256'),
                json_extract_string(profile_json, '$.dataset.manifest_sha256'), json_extract_string(profile_json, '$.engine.version')
         FROM profiles WHERE status = 'ok' QUALIFY row_number() OVER (PARTITION BY cell_key ORDER BY created_at DESC) = 1`,
      );
      const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
      return new Map(
        reader.getRows().map((r) => [String(r[0]), { fingerprint: text(r[1]), modelSha256: text(r[2]), datasetSha256: text(r[3]), engineVersion: text(r[4]) }]),
      );
    });
  }

  /** The stored Profile, rebuilt from profile_json and the samples table and validated by ProfileSchema; undefined if absent. */
  async getProfile(profileId: string): Promise<Profile | undefined> {
    return this.withConnection(async (connection) => {
      const head = await connection.runAndReadAll('SELECT profile_json::VARCHAR FROM profiles WHERE profile_id = $1', [profileId]);
      const json = head.getRows()[0]?.[0];
      if (json === undefined) return undefined;
      const samples = await connection.runAndReadAll(
        'SELECT session, batch, boundary, ns FROM samples WHERE profile_id = $1 ORDER BY seq',
        [profileId],
      );
      const [sessions, batches, boundaries, ns] =
        samples.currentRowCount === 0 ? [[], [], [], []] : SampleColumnsSchema.parse(samples.getColumns());
      const rebuilt = {
        ...(JSON.parse(String(json)) as Record<string, unknown>),
        samples: ns.map((value, i) => ({ session: sessions[i], batch: batches[i], boundary: boundaries[i], ns: value })),
      };
      const parsed = ProfileSchema.safeParse(rebuilt);
      if (!parsed.success) {
        throw new StoreSchemaError(
          `Profile ${profileId} in ${this.file} no longer satisfies ProfileSchema (written by another pbh version?): ` +
            z.prettifyError(parsed.error),
        );
      }
      return parsed.data;
    });
  }

  /** One summary row per Profile (any status), oldest first. */
  async listProfiles(filter: ProfileFilter = {}): Promise<ProfileSummary[]> {
    const conditions: string[] = [];
    const values: (string | number)[] = [];
    const add = (column: string, value: string | number | undefined): void => {
      if (value === undefined) return;
      values.push(value);
      conditions.push(`${column} = $${values.length}`);
    };
    add('run_id', filter.runId);
    add('status', filter.status);
    add('model_name', filter.modelName);
    add('engine_name', filter.engineName);
    add('engine_device', filter.device);
    add('batch_size', filter.batchSize);
    add('cell_key', filter.cellKey);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    return this.withConnection(async (connection) => {
      const reader = await connection.runAndReadAll(
        `SELECT profile_id, run_id, cell_key, created_at, status, error, model_name, engine_name, engine_version,
                engine_device AS device, batch_size, throughput_mean AS throughput_sps, predict_p50_ms, predict_p99_ms
         FROM profiles ${where} ORDER BY created_at, profile_id`,
        values,
      );
      return reader.getRowObjectsJS().map((row) => ProfileSummarySchema.parse(row));
    });
  }

  /**
   * Checkpoints a read-write store (WAL folded into the file, so copies of it are complete) and
   * releases the file. Later calls return the first call's promise.
   */
  /**
   * Checkpoints (unless told not to) and closes. `checkpoint: false` after a commit failed: DuckDB's instance may then
   * abort the process on any further write, and what it committed is safe in the write-ahead log anyway.
   */
  close(options: { checkpoint?: boolean } = {}): Promise<void> {
    this.closing ??= this.withConnection(async (connection) => {
      if (!this.readOnly && options.checkpoint !== false) await connection.run('CHECKPOINT');
    }).finally(() => {
      this.closed = true;
      this.connection.closeSync();
      this.instance.closeSync();
      releaseClaim(this.file);
    });
    return this.closing;
  }

  private assertWritable(operation: string): void {
    if (this.readOnly) throw new ReadOnlyStoreError(this.file, operation);
  }

  private inTransaction(what: string, work: (connection: DuckDBConnection) => Promise<void>): Promise<void> {
    return this.withConnection(async (connection) => {
      await connection.run('BEGIN TRANSACTION');
      try {
        await work(connection);
        await connection.run('COMMIT');
      } catch (error) {
        let rollback = 'rolled back, nothing of it was stored';
        try {
          await connection.run('ROLLBACK');
        } catch (rollbackError) {
          rollback = `and the rollback failed too (${messageOf(rollbackError)})`;
        }
        throw new StoreWriteError(`Failed ${what} in ${this.file}: ${messageOf(error)} (${rollback}).`, { cause: error });
      }
    });
  }
}

async function appendSamples(connection: DuckDBConnection, profile: Profile): Promise<void> {
  const appender = await connection.createAppender('samples');
  try {
    for (const [seq, sample] of profile.samples.entries()) {
      appender.appendVarchar(profile.profile_id);
      appender.appendInteger(seq);
      appender.appendInteger(sample.session);
      appender.appendInteger(sample.batch);
      appender.appendVarchar(sample.boundary);
      appender.appendDouble(sample.ns);
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    closeQuietly(appender);
  }
}

async function appendLayers(connection: DuckDBConnection, profile: Profile): Promise<void> {
  const appender = await connection.createAppender('layers');
  try {
    for (const [seq, layer] of profile.layers.entries()) {
      appender.appendVarchar(profile.profile_id);
      appender.appendInteger(seq);
      appender.appendVarchar(layer.name);
      appender.appendVarchar(layer.op_type);
      appender.appendDouble(layer.mean_ns);
      appender.appendInteger(layer.calls);
      appender.appendDouble(layer.share);
      if (layer.input_shapes === null) appender.appendNull();
      else appender.appendVarchar(layer.input_shapes);
      if (layer.output_shapes === null) appender.appendNull();
      else appender.appendVarchar(layer.output_shapes);
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    closeQuietly(appender);
  }
}

/** After a failed flush the appender's close repeats the same error; the first one is the one reported. */
function closeQuietly(appender: { closeSync(): void }): void {
  try {
    appender.closeSync();
  } catch {
    // already reported by the failed append/flush
  }
}
