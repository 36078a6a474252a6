export { RunNotOwnedError, RunNotResumableError, SessionBusyError, StaleRunLeaseError } from './errors.js';
export {
  applyRunEvent,
  initialRun,
  isLiveRun,
  LIVE_RUN_STATES,
  loadRun,
  type RunAggregate,
} from './run-aggregate.js';
export { ADMIN_CLI_ACTOR, mayCancelRun } from './run-ownership.js';
export { type RunLease, RunRuntime, type RunRuntimeOptions } from './run-runtime.js';
export { decideSession, type OpenSessionSpec, type SessionCommand, sessionDecider } from './session.decider.js';
export {
  bindingIdempotencyKey,
  CreateSessionSpec,
  type MessageSpec,
  SessionRuntime,
  type SessionRuntimeOptions,
} from './session-runtime.js';
export { TurnAdmission } from './turn-admission.js';
