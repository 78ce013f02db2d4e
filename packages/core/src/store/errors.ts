/** The DuckDB file is held by another process (or by this one); DuckDB allows one writer and no other open beside it. */
export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';
  constructor(
    readonly file: string,
    /** PID of the holder when DuckDB's message names it. */
    readonly holderPid: number | null,
    cause?: unknown,
  ) {
    const holder = holderPid === null ? 'another process' : holderPid === process.pid ? `this process (PID ${holderPid})` : `another process (PID ${holderPid})`;
    super(
      `The PBH database ${file} is locked: ${holder} has it open, and DuckDB lets a read-write open share a file ` +
        `with no other open, read-only ones included. Wait for the other pbh run to finish, or pass --db with another file; ` +
        `to read results meanwhile, copy ${file} (and ${file}.wal if present) and point --db at the copy.`,
      { cause },
    );
  }
}

/** A read-only open of a file that does not exist. */
export class StoreNotFoundError extends Error {
  override readonly name = 'StoreNotFoundError';
  constructor(readonly file: string) {
    super(
      `No PBH database at ${file}: reading commands never create one. Run a benchmark first (pbh run <config>) ` +
        `or pass --db with the path of an existing .duckdb file.`,
    );
  }
}

/**
 * The path holds something DuckDB cannot open as a database (a folder, an empty or truncated file, another format):
 * PBH leaves it as it is rather than guess, and says where to point --db instead.
 */
export class StoreUnreadableError extends Error {
  override readonly name = 'StoreUnreadableError';
  constructor(
    readonly file: string,
    reason: string,
    cause?: unknown,
  ) {
    super(
      `The PBH database ${file} cannot be opened: ${reason}. PBH left it as it is. Point --db at a .duckdb file written ` +
        `by pbh run (pbh run creates a new one where the path does not exist yet), or move ${file} away if it is not the database.`,
      { cause },
    );
  }
}

/** The file is not a PBH store, or its schema is newer/older than this pbh can use as opened. */
export class StoreSchemaError extends Error {
  override readonly name = 'StoreSchemaError';
}

/** A write was attempted on a store opened read-only. */
export class ReadOnlyStoreError extends Error {
  override readonly name = 'ReadOnlyStoreError';
  constructor(
    readonly file: string,
    operation: string,
  ) {
    super(`${operation} needs a writable store, but ${file} was opened read-only: open it with openStore(path, { readOnly: false }).`);
  }
}

/** Writing one Profile failed; the transaction was rolled back so nothing of that Profile is stored. */
export class StoreWriteError extends Error {
  override readonly name = 'StoreWriteError';
}

/** The disk holding the database is full: nothing was written, and the message says where to free space. */
export class StoreFullError extends Error {
  override readonly name = 'StoreFullError';
}

export const DISK_FULL = /no space left|ENOSPC|disk (is )?full/i;

/** A `pbh query` statement was refused (it is not a reading statement, or reads outside the database) or failed (bad SQL). */
export class QueryError extends Error {
  override readonly name = 'QueryError';
}

/** Reads "Conflicting lock is held in /usr/bin/node (PID 5518)" from DuckDB's lock message. */
export function lockHolderPid(duckdbMessage: string): number | null {
  const match = /\(PID (\d+)\)/.exec(duckdbMessage);
  return match?.[1] === undefined ? null : Number(match[1]);
}

export function isLockConflict(duckdbMessage: string): boolean {
  return duckdbMessage.includes('Could not set lock on file');
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
