export {
  type AppOptions,
  DEFAULT_CORE_DIR,
  DemiurgeApp,
  type OperatorPush,
  runtimeDir,
  type SubmitInput,
  type Submitted,
  storePath,
} from './app.js';
export {
  COMPLETION_RETRY_MS,
  COMPLETION_WAKE_EVENTS,
  type CompletionRound,
  CompletionTurns,
} from './completion-turns.js';
export { ConfigError, type ConfigOverrides, configPath, HostConfig, loadConfig } from './config.js';
export { createOperatorBackend, serveGatewaySocket, serveGatewayStdio } from './gateway.js';
export { hostIdentity, isHostAlive } from './host-identity.js';
export { hostProjectors } from './projectors.js';
export { type ScheduleOverview, scheduleOverview } from './schedule-overview.js';
