export { type CoreCheckReport, type CoreTestRunner, checkCore } from './core-check.js';
export { type CoreFileChanges, coreFileChanges, isUnchanged, summarizeChanges, unifiedDiff } from './core-diff.js';
export { type SlotVersion, slotVersions } from './core-pin.js';
export {
  CORE_STREAM_TYPE,
  CoreRevisions,
  type EvolveReleaseOutcome,
  type RecordRevision,
  type RevisionEntry,
} from './core-revisions.js';
export {
  type CoreFiles,
  CoreSnapshotStore,
  readCoreFiles,
  restoreFiles,
  revisionOf,
  writeFiles,
} from './core-snapshot.js';
export { type CoreStreamState, coreStreamState, type EvolveClaim } from './evolve-claim.js';
export {
  CoreCheckFailedError,
  EvolveClaimLostError,
  PinnedRevisionGoneError,
  UnknownRevisionError,
} from './revision-errors.js';
