export type { ConnectionOptions, Synchronous } from './connection.js';
export { migrations, SCHEMA_VERSION } from './migrations.js';
export { openSqliteEventStore } from './sqlite-event-store.js';
export type { ConnectionSettings, SqliteEventStore, SqliteEventStoreOptions } from './sqlite-store-options.js';
