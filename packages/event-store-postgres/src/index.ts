export {
  createDatabaseClock,
  type DatabaseClock,
  type DatabaseClockOptions,
  type ReadServerMs,
} from './database-clock.js';
export {
  type ChainBreak,
  type ChainedRow,
  type ChainHead,
  type ChainReport,
  eventHash,
  GENESIS_HASH,
} from './hash-chain.js';
export { migrations, SCHEMA_VERSION } from './migrations.js';
export { openPostgresEventStore } from './postgres-event-store.js';
export { openPostgresLogAdmin } from './postgres-log-admin.js';
export type { PostgresEventStore, PostgresEventStoreOptions } from './postgres-store-options.js';
export { createScratchSchema, type ScratchSchema } from './scratch-schema.js';
export { redactUrl, StoreUnavailableError } from './store-unavailable.js';
