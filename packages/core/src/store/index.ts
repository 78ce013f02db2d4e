export { openStore, ProfileStore, ProfileSummarySchema } from './store.js';
export type { OpenStoreOptions, ProfileFilter, ProfileSummary } from './store.js';
export { RunStartSchema } from './run-start.js';
export type { RunStart } from './run-start.js';
export { runQuery, runSandboxedQuery, formatTable, formatCsv, formatJson } from './query.js';
export type { QueryCell, QueryResult, TableFormatOptions } from './query.js';
export { exportStore, EXPORTED_RELATIONS } from './export.js';
export type { ExportFormat, ExportOptions } from './export.js';
export { MIGRATIONS, LATEST_SCHEMA_VERSION } from './migrations.js';
export type { Migration } from './migrations.js';
export { STORED_METRIC_NAMES, STORED_SCORE_NAMES, systemId } from './profile-rows.js';
export {
  StoreLockedError,
  StoreNotFoundError,
  StoreSchemaError,
  StoreUnreadableError,
  ReadOnlyStoreError,
  StoreWriteError,
  StoreFullError,
  DISK_FULL,
  QueryError,
} from './errors.js';
