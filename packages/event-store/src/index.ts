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
export type { DecidedAppend, DecidedAppendResult, LockedEntry, LockedListing } from './decided-append.js';
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
  checkImportRecord,
  type LogAdmin,
  type LogHead,
  LogImportError,
  type StoredEventRecord,
  type StreamHeadInfo,
} from './log-records.js';
export {
  createInMemoryEventStore,
  createInMemoryLog,
  type InMemoryEventStoreOptions,
  type InMemoryLog,
} from './memory-event-store.js';
export { type PollLoop, type PollLoopOptions, pollLoop } from './poll-loop.js';
export {
  dumpProjections,
  type ProjectionSource,
  type ProjectionSummary,
  summarizeProjections,
  type TypedCollection,
  typedCollection,
} from './projection-readers.js';
export {
  defineProjector,
  type ListOptions,
  type ProjectionReader,
  type ProjectionTx,
  type Projector,
  type ProjectorCheckpoint,
  type ProjectorDefinition,
  type ProjectorMode,
} from './projector.js';
