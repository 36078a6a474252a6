export { type ArtifactSink, type OpenArtifact, openArtifactFile, taskArtifactDir } from './artifact-file.js';
export { type CleanupError, cleanupErrorOf, describeCleanupError } from './cleanup-error.js';
export {
  ExclusiveScopeBusyError,
  NoTaskHandlerError,
  TaskNotOwnedError,
  TaskNotStartableError,
  WorkerClosedError,
} from './errors.js';
export { LogTail, type LogTailOptions, type TailLine, TRUNCATION_MARK } from './log-tail.js';
export { runNodeTestFile } from './node-test-file.js';
export {
  groupAlive,
  type HeldProcessGroup,
  type ProcessGroupResult,
  type ProcessGroupRun,
  ProcessGroupStartError,
  runInProcessGroup,
} from './process-group.js';
export {
  carriesSpawnId,
  currentBootId,
  type ProcessRecord,
  type ProcStat,
  parseProcStat,
  parseStartMarker,
  processMatches,
  readProcStat,
  SPAWN_ID_ENV,
  startMarkerOf,
} from './process-identity.js';
export {
  type KillFn,
  type StopOptions,
  type StopReport,
  scanTree,
  signalTree,
  stopTree,
  type TreeScan,
  treeAlive,
} from './process-tree.js';
export { RuntimeTaskWorker } from './runtime-task-worker.js';
export { scopesOverlap } from './scopes.js';
export type { TaskFacts } from './task-facts.js';
export type {
  PreparedTask,
  RecoverContext,
  RunningTask,
  TaskContext,
  TaskHandler,
  TaskOutcome,
} from './task-handler.js';
export { isFinished, type TaskLogs } from './task-reads.js';
export {
  createTerminalExecHandler,
  TASK_ID_ENV,
  type TerminalExecOptions,
  terminalExecHandler,
} from './terminal-exec.handler.js';
export { TerminalExecInput, workerTaskKinds } from './terminal-exec.input.js';
export {
  type CloseReport,
  type RecoverReport,
  type RunSubmittedReport,
  type RuntimeTaskWorkerOptions,
  SHUTDOWN_REASON,
} from './worker-options.js';
