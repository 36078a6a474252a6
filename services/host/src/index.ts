/** An Agent Core (pipelines.yaml, agent.yaml, slot.yaml) that does not load is a configuration error. */
export { CoreLoadError, loadCore } from '@demiurge/slots';
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
export { describeFailure } from './describe-failure.js';
export { createOperatorBackend, type GatewayOptions, serveGatewaySocket, serveGatewayStdio } from './gateway.js';
export { hostIdentity, isHostAlive } from './host-identity.js';
export { HostOperatorSession, type SessionGatewayOptions } from './operator-session.js';
export { hostProjectors } from './projectors.js';
export { type ScheduleOverview, scheduleOverview } from './schedule-overview.js';
