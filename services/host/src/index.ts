/** An Agent Core (pipelines.yaml, agent.yaml, slot.yaml) that does not load is a configuration error. */

/** The fake provider's script (`provider.fake_script` of config.yaml) that does not load: a configuration error. */
export { FakeScriptError } from '@demiurge/providers';
export {
  CoreCheckFailedError,
  type CoreCheckReport,
  type CoreFiles,
  CoreLoadError,
  CoreRevisions,
  CoreSnapshotStore,
  checkCore,
  coreFileChanges,
  loadCore,
  PinnedRevisionGoneError,
  type RevisionEntry,
  readCoreFiles,
  restoreFiles,
  revisionOf,
  summarizeChanges,
  UnknownRevisionError,
  unifiedDiff,
} from '@demiurge/slots';
export { type AppOptions, DemiurgeApp, type SubmitInput, type Submitted } from './app.js';
export {
  COMPLETION_RETRY_MS,
  COMPLETION_WAKE_EVENTS,
  type CompletionRound,
  CompletionTurns,
} from './completion-turns.js';
export { ConfigError, type ConfigOverrides, configPath, HostConfig, loadConfig } from './config.js';
export { CoreSource, coreStoreDir, type ResolvedCore } from './core-source.js';
export { DEFAULT_HTTP_ADDR, HttpAddressError, HttpListenError, parseHttpAddress } from './dashboard/address.js';
export { type DashboardServer, serveDashboard, TOKEN_COOKIE } from './dashboard/dashboard-server.js';
export { describeFailure } from './describe-failure.js';
export {
  createEvolverRunHandler,
  discardEvolveCopy,
  EVOLVE_TOOLS,
  evolveScope,
  evolveWorkingCopy,
  sweepEvolveCopies,
} from './evolver-run.js';
export {
  createOperatorBackend,
  type GatewayOptions,
  type HostStatusResult,
  serveGatewaySocket,
  serveGatewayStdio,
} from './gateway.js';
export { hostIdentity, isHostAlive } from './host-identity.js';
export { hostTaskKinds, UnhandledTaskKindError } from './host-task-kinds.js';
export {
  createLogger,
  type LogFields,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  silentLogger,
} from './logger.js';
export { HostOperatorSession, type SessionGatewayOptions } from './operator-session/host-operator-session.js';
export { DEFAULT_CORE_DIR, runtimeDir, storePath } from './paths.js';
export { hostProjectors } from './projectors.js';
export { type RunResumerOptions, watchRunCommands } from './run-resumer.js';
export { ADMIN_OWNER, type AdminRuntime, createAdminRuntime } from './runtime/admin-runtime.js';
export {
  createRuntime,
  type HostRuntime,
  type OperatorPush,
  type RuntimeOptions,
} from './runtime/create-runtime.js';
export { type ScheduleOverview, scheduleOverview } from './schedule-overview.js';
export {
  COMMIT_TRACE_ENV,
  type CommitTraceLine,
  CRASH_AT_COMMIT_ENV,
  type HostTestHooks,
  hostTestHooks,
  INJECT_BUG_ENV,
  type InjectedBug,
} from './store/crash-hooks.js';
export {
  describeStore,
  type HostStore,
  isPostgresStore,
  type OpenHostStoreOptions,
  openHostStore,
  type StoreSelection,
  storeSelection,
} from './store/host-store.js';
export { type HostTelemetry, startTelemetry, telemetryRequested } from './telemetry/telemetry.js';
