export type { ProjectionLag } from './async-projections.js';
export type { ConnectionOptions, Synchronous } from './connection.js';
export { assertSqliteFile, readSchemaInfo, type SchemaInfo, snapshotDatabase } from './database-file.js';
export {
  type ChainBreak,
  type ChainedRow,
  type ChainHead,
  type ChainReport,
  eventHash,
  GENESIS_HASH,
} from './hash-chain.js';
export { migrations, SCHEMA_VERSION } from './migrations.js';
export { openSqliteEventStore } from './sqlite-event-store.js';
export { openSqliteLogAdmin } from './sqlite-log-admin.js';
export type {
  CommitHook,
  CommitPhase,
  ConnectionSettings,
  SqliteEventStore,
  SqliteEventStoreOptions,
} from './sqlite-store-options.js';
export {
  checkStoreFile,
  DEFAULT_FULL_CHECK_MAX_BYTES,
  type StoreFileCheckOptions,
  type StoreFileReport,
} from './store-file-check.js';
