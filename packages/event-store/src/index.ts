export {
  type AppendPlan,
  checkExpectedVersion,
  eventIdempotencyKey,
  type PlannedEvent,
  type PlannedStream,
  planAppend,
  toRecorded,
} from './append-plan.js';
export { catchUpSubscription, iterateInBatches } from './catch-up.js';
export {
  backoffDelay,
  commandLoop,
  type Decision,
  type Loaded,
  loadAggregate,
  type RetryOptions,
  type StreamFold,
  streamAppend,
} from './command-handling.js';
export {
  CorruptDatabaseError,
  DamagedStoreError,
  DatabaseNewerThanCodeError,
  type ExpectedVersion,
  InvalidAppendError,
  ProjectorFailedError,
  StoreBusyError,
  StoreClosedError,
  StreamTypeMismatchError,
  StreamVersionConflictError,
  UnknownProjectorError,
} from './errors.js';
export type {
  AppendOptions,
  AppendResult,
  AppendStream,
  EventStore,
  IterateOptions,
  ReadAllOptions,
  ReadStreamOptions,
  RebuildOptions,
  RebuildProgress,
  RebuildReport,
  SubscribeOptions,
} from './event-store.js';
export {
  createInMemoryEventStore,
  createInMemoryLog,
  type InMemoryEventStoreOptions,
  type InMemoryLog,
} from './memory-event-store.js';
export { encodeDocument, selectIds } from './memory-projection-tx.js';
export {
  defineProjector,
  type ListOptions,
  type ProjectionReader,
  type ProjectionTx,
  type Projector,
  type ProjectorCheckpoint,
  type ProjectorDefinition,
} from './projector.js';
export { applyOne, assertDistinctProjectors, selectProjectors } from './projector-set.js';
