export type {
  AgentCore,
  CoreLimits,
  FailurePolicy,
  McpServerSpec,
  Pipelines,
  SlotMode,
  SlotSpec,
} from './agent-core.js';
export {
  type BackgroundFailure,
  type BackgroundItem,
  type BackgroundWorkOptions,
  BackgroundWorkRuntime,
  type DrainReport,
} from './background-work.js';
export { type BootstrapRecord, bootstrapRecord } from './bootstrap-record.js';
export { loadCore } from './core-loader.js';
export { AgentFile, MODULE_EXTENSIONS, PipelinesFile, SLOT_ID_PATTERN, SlotFile } from './core-schema.js';
export {
  createDeliveryIntents,
  type DeliverFn,
  type DeliveryIntent,
  type DeliveryIntentsOptions,
  type SessionDeliveryRoute,
} from './delivery-intents.js';
export {
  CoreLoadError,
  SlotFailedError,
  type SlotFailureOutcome,
  SlotPathError,
  SlotRuleError,
  type YamlPath,
} from './errors.js';
export { MCP_SERVER_NAME_PATTERN, McpFile, McpServerEntry } from './mcp-schema.js';
export {
  CORE_STREAM_TYPE,
  CoreCheckFailedError,
  type CoreCheckReport,
  type CoreFileChanges,
  type CoreFiles,
  CoreRevisions,
  CoreSnapshotStore,
  type CoreStreamState,
  type CoreTestRunner,
  checkCore,
  coreFileChanges,
  coreStreamState,
  type EvolveClaim,
  EvolveClaimLostError,
  type EvolveReleaseOutcome,
  isUnchanged,
  PinnedRevisionGoneError,
  type RecordRevision,
  type RevisionEntry,
  readCoreFiles,
  restoreFiles,
  revisionOf,
  type SlotVersion,
  slotVersions,
  summarizeChanges,
  UnknownRevisionError,
  unifiedDiff,
  writeFiles,
} from './revisions/index.js';
export { SLOTS_ACTOR, type SlotLogEntry } from './slot-invocation.js';
export {
  createSlotModuleLoader,
  SlotModuleError,
  type SlotModuleLoad,
  type SlotModuleLoader,
  type SlotModuleLoaderOptions,
} from './slot-module.js';
export { type CachedModule, SlotModuleCache, type SlotModuleSource } from './slot-module-cache.js';
export {
  type BootstrapView,
  SlotRunCollections,
  type SlotRunView,
  slotRunsProjector,
} from './slot-runs.projector.js';
export {
  type BootstrapOutcome,
  type InputOutcome,
  type InputRequest,
  type OutputOutcome,
  type OutputRequest,
  type PhaseRequest,
  type SlotRunSummary,
  SlotRuntime,
  type SlotRuntimeOptions,
} from './slot-runtime.js';
export {
  type AddContextOptions,
  type ContextItem,
  type ContextRole,
  defineSlot,
  type HistoryEntry,
  type SendResult,
  type SlotContext,
  type SlotFunction,
  type SlotInput,
  type SlotModule,
  type SlotOutput,
} from './slot-sdk.js';
