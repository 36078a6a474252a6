export { ExitCode, exitCodeOf, UsageError } from './cli-errors.js';
export { CONFIG_TEMPLATE } from './config-template.js';
export { type HomePaths, resolveHome } from './home.js';
export type { CommandIo, StopReason } from './io.js';
export { runCli } from './program.js';
export {
  NoDatabaseError,
  openRuntimeStore,
  runtimeProjectorNames,
  runtimeProjectors,
  withRuntimeStore,
} from './runtime-store.js';
export { appendSampleSession } from './sample-session.js';
export {
  type Ack,
  type DriveContext,
  type HostDriverOptions,
  type HostScenario,
  hostDriver,
  type SeedContext,
} from './sweep/host-driver.js';
export {
  type HostExit,
  type HostProcess,
  HostStartError,
  type ReadyLine,
  type StartHostOptions,
  startHost,
} from './sweep/host-process.js';
export {
  cancelScenario,
  compactionScenario,
  deliveryScenario,
  SCENARIOS as SWEEP_SCENARIOS,
  scheduleScenario,
  turnScenario,
} from './sweep/scenarios.js';
export { type FakeStep, type Home, type HomeConfig, writeHome } from './sweep/sweep-home.js';
export { SweepLog } from './sweep/sweep-log.js';
export { verifyProblems } from './sweep/verify-home.js';
export { type SinkHit, startWebhookSink, type WebhookSink } from './sweep/webhook-sink.js';
export { checkInvariants, Invariant, type InvariantFinding } from './verify/invariants.js';
export { diffProjection, type ProjectionDifference } from './verify/projection-diff.js';
