import { asDomainEvent, type DomainEventData, type RecordedEvent, type TaskKind } from '@demiurge/contracts';
import { NONE } from '../define-lifecycle.js';
import { type TaskEventType, type TaskState, taskLifecycle } from '../machines/task.machine.js';
import { nextState } from '../transitions.js';

/** How many `task.log` lines a task keeps (full output streams are artifacts). */
export const LOG_TAIL_LINES = 20;

/** One line of a task's log tail. */
export interface TaskLogLine {
  readonly stream: DomainEventData<'task.log'>['stream'];
  readonly text: string;
  /** When it was recorded. */
  readonly at: string;
}

/**
 * The OS process a task runs (its last `task.process_started`): enough to find it again, never enough
 * alone to signal it (a signal is sent only after `startMarker` is re-read and matches).
 */
export interface TaskProcess {
  readonly spawnId: string;
  /** The host that spawned it. */
  readonly host: string;
  readonly pid: number;
  readonly pgid: number;
  readonly platform: string;
  /** e.g. `linux:<boot id>:<start time>`; null where the platform offers none. */
  readonly startMarker: string | null;
  readonly at: string;
}

/** A recorded artifact of a task (`task.artifact_recorded`), e.g. its full stdout. */
export interface TaskArtifact {
  readonly artifactId: string;
  readonly name: string;
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string | null;
  readonly at: string;
}

/** A task's input as `task.submitted` carries it. */
export type TaskInput = Exclude<DomainEventData<'task.submitted'>['input'], undefined>;

/**
 * A task as its stream says: the task machine's state plus the facts its commands are checked against and
 * the task board is built from. The one fold of a task, used by the command side (`@demiurge/control-plane`)
 * and the task-board projector alike, so they cannot disagree.
 */
export interface TaskFacts {
  readonly status: TaskState;
  readonly taskId: string | null;
  /** The owner session (task reads and commands are scoped to it). */
  readonly sessionId: string | null;
  readonly runId: string | null;
  readonly parentTaskId: string | null;
  readonly kind: TaskKind | null;
  readonly title: string | null;
  readonly input: TaskInput | null;
  readonly notifyPolicy: 'return_to_parent' | 'silent';
  /** True once deleted: hidden from every active projection, kept for audit. */
  readonly hidden: boolean;
  /** Why it is blocked; null unless blocked. */
  readonly blocked: { readonly reason: string; readonly resumable: boolean } | null;
  readonly cancelReason: string | null;
  /** Set only when its cancel's cleanup failed: the error's type and message (the task is cancelled all the same). */
  readonly cleanupError?: { readonly type: string; readonly message: string };
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly exitCode: number | null;
  readonly summary: string | null;
  /** The worker of its last `task.started`. */
  readonly worker: string | null;
  /** The last {@link LOG_TAIL_LINES} `task.log` lines, oldest first. */
  readonly logTail: readonly TaskLogLine[];
  /** Its OS process (the last `task.process_started`); null when none was recorded. */
  readonly process: TaskProcess | null;
  /** Its recorded artifacts, in record order. */
  readonly artifacts: readonly TaskArtifact[];
  /** Its completion notice: `ready` after task.completion_ready, `acknowledged` after the parent's ack. */
  readonly completion: 'none' | 'ready' | 'acknowledged';
  /** When `task.submitted` was recorded. */
  readonly submittedAt: string | null;
}

/** A task before its first event. */
export const initialTaskFacts: TaskFacts = {
  status: NONE as TaskState,
  taskId: null,
  sessionId: null,
  runId: null,
  parentTaskId: null,
  kind: null,
  title: null,
  input: null,
  notifyPolicy: 'return_to_parent',
  hidden: false,
  blocked: null,
  cancelReason: null,
  error: null,
  exitCode: null,
  summary: null,
  worker: null,
  logTail: [],
  process: null,
  artifacts: [],
  completion: 'none',
  submittedAt: null,
};

/** The fields one accepted event sets. */
function changes(task: TaskFacts, recorded: RecordedEvent): Partial<TaskFacts> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'task.submitted': {
      const d = event.data;
      return {
        taskId: d.taskId,
        sessionId: d.sessionId,
        runId: d.runId ?? null,
        parentTaskId: d.parentTaskId ?? null,
        kind: d.kind,
        title: d.title,
        input: d.input ?? null,
        notifyPolicy: d.notifyPolicy ?? 'return_to_parent',
        submittedAt: event.recordedAt,
      };
    }
    case 'task.started':
      return { worker: event.data.worker };
    case 'task.blocked':
      return { blocked: { reason: event.data.reason, resumable: event.data.resumable } };
    case 'task.completed':
      return { summary: event.data.summary ?? null, exitCode: event.data.exitCode ?? null };
    case 'task.failed':
      return { error: event.data.error, exitCode: event.data.exitCode ?? null };
    case 'task.cancelled': {
      const d = event.data;
      return { cancelReason: d.reason, ...(d.cleanupError ? { cleanupError: d.cleanupError } : {}) };
    }
    case 'task.deleted':
      return { hidden: true };
    case 'task.log': {
      const line: TaskLogLine = { stream: event.data.stream, text: event.data.text, at: event.recordedAt };
      return { logTail: [...task.logTail, line].slice(-LOG_TAIL_LINES) };
    }
    case 'task.process_started': {
      const { taskId: _, startMarker, ...d } = event.data;
      return { process: { ...d, startMarker: startMarker ?? null, at: event.recordedAt } };
    }
    case 'task.artifact_recorded': {
      const { taskId: _, sha256, ...d } = event.data;
      return { artifacts: [...task.artifacts, { ...d, sha256: sha256 ?? null, at: event.recordedAt }] };
    }
    case 'task.completion_ready':
      return { completion: 'ready' };
    case 'task.completion_acknowledged':
      return { completion: 'acknowledged' };
    default:
      return {};
  }
}

/** The task after an event the machine took to `status`: its fields, and `blocked` only while blocked. */
function evolveTo(task: TaskFacts, event: RecordedEvent, status: TaskState): TaskFacts {
  const next: TaskFacts = { ...task, ...changes(task, event), status };
  return status === 'blocked' ? next : { ...next, blocked: null };
}

/**
 * The task fold, strict: an event the task machine refuses throws `IllegalTransitionError` naming the task.
 * @example
 * const task = await loadAggregate(store, taskFold, taskId); // task.state.status === 'active'
 */
export const taskFold = {
  streamType: taskLifecycle.streamType,
  initialState: initialTaskFacts,
  evolve(task: TaskFacts, event: RecordedEvent, streamId?: string): TaskFacts {
    return evolveTo(task, event, taskLifecycle.evolve(task.status, event, streamId));
  },
};

/**
 * The task fold, tolerant: `undefined` for an event the machine refuses (a read model skips it).
 * @example
 * evolveTask(initialTaskFacts, submitted)?.status; // 'created'
 */
export function evolveTask(task: TaskFacts, event: RecordedEvent): TaskFacts | undefined {
  const status = nextState(taskLifecycle, task.status, { type: event.type as TaskEventType, data: event.data });
  return status === undefined ? undefined : evolveTo(task, event, status);
}
