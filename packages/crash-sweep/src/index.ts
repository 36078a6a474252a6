export { type CommitTrace, type CommitTraceLine, describeCommit, parseCommitTrace } from './commit-trace.js';
export {
  COMMIT_TRACE_ENV,
  CRASH_AT_COMMIT_ENV,
  type CrashPhase,
  type CrashPoint,
  formatCrashPoint,
  INJECT_BUG_ENV,
  parseCrashPoint,
  planCrashPoints,
} from './crash-point.js';
export {
  type CheckProblem,
  type CrashPointDriver,
  formatSweepResult,
  type PointOutcome,
  type PointRun,
  type PointRunContext,
  type SweepOptions,
  type SweepProblem,
  type SweepResult,
  sweepCrashPoints,
} from './sweep.js';
