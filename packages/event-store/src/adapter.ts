/**
 * `@demiurge/event-store/adapter`: the plumbing a store adapter (the SQLite one, a later PostgreSQL one)
 * is built from, so that every backend plans appends, checks versions, applies projectors and serves
 * catch-up subscriptions the same way. Applications use the main entry; only adapters import this one.
 */
export {
  type AppendPlan,
  checkExpectedVersion,
  DEFAULT_META,
  DEFAULT_META_JSON,
  eventIdempotencyKey,
  metaJson,
  type PlannedEvent,
  type PlannedStream,
  planAppend,
  toRecorded,
} from './append-plan.js';
export { catchUpSubscription, iterateInBatches } from './catch-up.js';
export {
  type ChainBreak,
  type ChainedRow,
  type ChainHead,
  type ChainReport,
  ChainWalker,
  compareKept,
  type EventRow,
  eventHash,
  eventHashHex,
  GENESIS_HASH,
  walkChain,
} from './hash-chain.js';
export {
  chainImportRecord,
  STORED_EVENT_COLUMNS,
  type StoredEventRow,
  storedRecordOf,
} from './log-records.js';
export { encodeDocument, selectIds } from './memory-projection-tx.js';
export { applyOne, assertDistinctProjectors, selectProjectors } from './projector-set.js';
