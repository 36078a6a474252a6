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
export { checkInvariants, Invariant, type InvariantFinding } from './verify/invariants.js';
export { diffProjection, type ProjectionDifference } from './verify/projection-diff.js';
