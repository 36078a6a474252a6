export type { ConnectionOptions, Synchronous } from './connection.js';
export { migrations, SCHEMA_VERSION } from './migrations.js';
export {
  type ConnectionSettings,
  openSqliteEventStore,
  type SqliteEventStore,
  type SqliteEventStoreOptions,
} from './sqlite-event-store.js';
