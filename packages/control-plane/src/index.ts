export {
  assertCompletionScope,
  type CompletionConsumer,
  completionWorkId,
  type NoticeOutcome,
  type NoticeRecord,
  noticeRecords,
  type PendingNotice,
  renderNotice,
  type TakenNotices,
} from './completion-notices.js';
export {
  type DurableWorkOptions,
  DurableWorkRuntime,
  EnqueueSpec,
  type RecoverReport,
  type WorkClaim,
} from './durable-work.js';
export {
  InvalidSpecError,
  NotClaimableError,
  NotFoundError,
  NotResumableError,
  OutOfScopeError,
  parseSpec,
  StaleClaimError,
  UnknownKindError,
} from './errors.js';
export { type HostWorkLifecycleOptions, HostWorkLifecycleRuntime, type OperatorStatus } from './host-work-lifecycle.js';
export {
  createKindRegistry,
  defaultTaskKinds,
  defaultWorkKinds,
  type KindRegistry,
  taskKindInputs,
  WorkKind,
  workKindPayloads,
} from './kinds.js';
export { controlPlaneProjectors } from './projectors.js';
export {
  type ControlPlaneOptions,
  type ListTasksOptions,
  RuntimeControlPlane,
  type TaskRef,
  TaskSpec,
} from './runtime-control-plane.js';
export { type NewTaskEvent, type TaskCommand, taskDecider } from './task.decider.js';
export { decideWork, type WorkCommand, workDecider } from './work.decider.js';
export { loadWork, type WorkAggregate } from './work-aggregate.js';
