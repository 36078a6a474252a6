export { assertTransition } from './assert-transition.js';
export {
  checkEvents,
  createDecider,
  type DeciderSpec,
  foldState,
  isIdempotentRepeat,
  type LifecycleDecider,
} from './decider.js';
export {
  defineLifecycle,
  type IdempotentRepeat,
  type Lifecycle,
  type LifecycleConfig,
  type LifecycleEvent,
  NONE,
  type StateOf,
} from './define-lifecycle.js';
export { IllegalTransitionError } from './errors.js';
export { type ApprovalFacts, approvalFold, evolveApproval, initialApprovalFacts } from './folds/approval.fold.js';
export {
  type DeliveryFacts,
  type DeliveryIntent,
  deliveryFold,
  evolveDelivery,
  initialDeliveryFacts,
} from './folds/delivery.fold.js';
export type { Fact } from './folds/fact.js';
export { evolveRun, initialRunFacts, namesStaleLease, type RunFacts, runFold } from './folds/run.fold.js';
export {
  evolveScheduleInstance,
  initialScheduleInstanceFacts,
  type ScheduleInstanceFacts,
  scheduleInstanceFold,
} from './folds/schedule-instance.fold.js';
export { evolveSession, initialSessionFacts, type SessionFacts, sessionFold } from './folds/session.fold.js';
export {
  evolveTask,
  initialTaskFacts,
  LOG_TAIL_LINES,
  type TaskArtifact,
  type TaskFacts,
  type TaskInput,
  type TaskLogLine,
  type TaskProcess,
  taskFold,
} from './folds/task.fold.js';
export { evolveToolCall, initialToolCallFacts, type ToolCallFacts, toolCallFold } from './folds/tool-call.fold.js';
export {
  evolveTurn,
  initialTurnFacts,
  type ModelCallFacts,
  type TurnCoreFacts,
  type TurnFacts,
  type TurnSelectionFacts,
  type TurnStepFacts,
  turnFold,
} from './folds/turn.fold.js';
export {
  CLAIMABLE_WORK_STATES,
  evolveWork,
  initialWorkFacts,
  LEASED_WORK_STATES,
  namesStaleClaim,
  type WorkFacts,
  type WorkPayload,
  workFold,
} from './folds/work.fold.js';
export { type IdempotentRow, idempotentRepeats } from './idempotent-repeats.js';
export { lazyMachine, lazySetup } from './lazy-machine.js';
export { renderLifecycleDoc } from './lifecycle-doc.js';
export { lifecycleFor, lifecycles } from './lifecycles.js';
export {
  type ApprovalEventType,
  type ApprovalState,
  approvalLifecycle,
  approvalMachine,
} from './machines/approval.machine.js';
export { type CoreEventType, type CoreState, coreLifecycle, coreMachine } from './machines/core.machine.js';
export {
  type DeliveryEventType,
  type DeliveryState,
  deliveryLifecycle,
  deliveryMachine,
} from './machines/delivery.machine.js';
export {
  type McpServerEventType,
  type McpServerState,
  mcpServerLifecycle,
  mcpServerMachine,
} from './machines/mcp-server.machine.js';
export { type RunEventType, type RunState, runLifecycle, runMachine } from './machines/run.machine.js';
export {
  type ScheduleInstanceEventType,
  type ScheduleInstanceState,
  scheduleInstanceLifecycle,
  scheduleInstanceMachine,
} from './machines/schedule-instance.machine.js';
export {
  type SessionEventType,
  type SessionState,
  sessionLifecycle,
  sessionMachine,
} from './machines/session.machine.js';
export { type SlotEventType, type SlotState, slotLifecycle, slotMachine } from './machines/slot.machine.js';
export { type TaskEventType, type TaskState, taskLifecycle, taskMachine } from './machines/task.machine.js';
export {
  type ToolCallEventType,
  type ToolCallState,
  toolCallLifecycle,
  toolCallMachine,
} from './machines/tool-call.machine.js';
export { type TurnEventType, type TurnState, turnLifecycle, turnMachine } from './machines/turn.machine.js';
export { type WorkEventType, type WorkState, workLifecycle, workMachine } from './machines/work.machine.js';
export { mermaidDiagram } from './mermaid.js';
export { finalStates, type TransitionRow, transitionTable } from './transition-table.js';
export { allowedEvents, canTransition, nextState } from './transitions.js';
export {
  createLogVerifier,
  type LogVerifier,
  type LogVerifierOptions,
  type LogViolation,
  type LogViolationKind,
  type VerifyLogOptions,
  type VerifyReport,
  verifyLog,
} from './verify-log.js';
