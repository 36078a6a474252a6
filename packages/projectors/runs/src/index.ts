export {
  type ApprovalEntry,
  type ApprovalStatus,
  type ApprovalView,
  isApprovalOpen,
  OPEN_APPROVAL_STATUSES,
  sessionApprovalKey,
} from './approval.view.js';
export {
  FINAL_RUN_STATUSES,
  isRunFinal,
  type LiveRunEntry,
  type RecordedFailure,
  type RunStatus,
  type RunView,
  type SessionRunEntry,
  sessionRunKey,
  type TurnRunEntry,
} from './run.view.js';
export { RunsCollections, sessionPrefix } from './runs.collections.js';
export { runsProjector } from './runs.projector.js';
export { type RunsReader, runsReader } from './runs.reader.js';
export {
  STEP_KEY_DIGITS,
  stepKey,
  type ToolCallStatus,
  type ToolCallView,
  turnPrefix,
  turnToolCallKey,
} from './tool-call.view.js';
