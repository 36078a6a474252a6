import type { EventData, TaskArtifactRecorded, TaskKind, TaskProcessStarted, TaskSubmitted } from '@demiurge/contracts';
import {
  LOG_TAIL_LINES as TASK_LOG_TAIL_LINES,
  type TaskArtifact,
  type TaskEventType,
  type TaskLogLine,
  type TaskProcess,
  type TaskState,
} from '@demiurge/lifecycle';

/** A task's status: any state of the task machine except the pre-creation `none`. */
export type TaskStatus = Exclude<TaskState, 'none'>;

/** The board lanes. A task in no lane (deleted, archived) is off the board. */
export type TaskLane = 'active' | 'waiting' | 'blocked' | 'done';

/** How many `task.log` lines a task keeps (full output streams are artifacts): the task fold's. */
export const LOG_TAIL_LINES = TASK_LOG_TAIL_LINES;

/** One line of a task's log tail, the OS process a task runs, a recorded artifact: as the task fold keeps them. */
export type { TaskArtifact, TaskLogLine, TaskProcess };

/** The process fields of a `task.process_started`, as the board keeps them. */
export type TaskProcessData = Omit<EventData<typeof TaskProcessStarted>, 'taskId'>;
/** The artifact fields of a `task.artifact_recorded`, as the board keeps them. */
export type TaskArtifactData = Omit<EventData<typeof TaskArtifactRecorded>, 'taskId'>;

/** One detached task as the board and the control plane read it. */
export interface TaskView {
  readonly taskId: string;
  readonly sessionId: string;
  readonly runId: string | null;
  readonly parentTaskId: string | null;
  readonly kind: TaskKind;
  readonly title: string;
  readonly input: Exclude<EventData<typeof TaskSubmitted>['input'], undefined> | null;
  readonly notifyPolicy: 'return_to_parent' | 'silent';
  readonly status: TaskStatus;
  /** Its lane ({@link laneOf}); null once deleted or archived. */
  readonly lane: TaskLane | null;
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
  /** Its recorded artifacts (full output streams...), in record order. */
  readonly artifacts: readonly TaskArtifact[];
  /** Its completion notice: `ready` after task.completion_ready, `acknowledged` after the parent's ack. */
  readonly completion: 'none' | 'ready' | 'acknowledged';
  readonly submittedAt: string;
  readonly updatedAt: string;
  /** The stream version of the last event applied. */
  readonly version: number;
  /** `allowedEvents(taskLifecycle, status)`: what the machine accepts now. */
  readonly allowed: readonly TaskEventType[];
}

/** An entry of `board`: a task in a lane. */
export interface BoardEntry {
  readonly taskId: string;
  readonly sessionId: string;
  readonly lane: TaskLane;
  readonly status: TaskStatus;
  readonly kind: TaskKind;
  readonly title: string;
}

/** An entry of `by-session`: every task of a session, hidden ones included. */
export interface SessionTaskEntry {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly hidden: boolean;
}

/** Collections of the `task-board` projector. */
export const TaskBoardCollections = {
  /** id = taskId → {@link TaskView}, every task (deleted ones too, for audit) */
  tasks: 'tasks',
  /** id = {@link boardKey} → {@link BoardEntry}, tasks in a lane */
  board: 'board',
  /** id = {@link sessionTaskKey} → {@link SessionTaskEntry}, every task */
  bySession: 'by-session',
} as const;

const LANES: Record<TaskStatus, TaskLane | null> = {
  created: 'active',
  active: 'active',
  waiting: 'waiting',
  blocked: 'blocked',
  completed: 'done',
  failed: 'done',
  cancelled: 'done',
  deleted: null,
  archived: null,
};

/**
 * The lane of a status: created/active → `active`, waiting → `waiting`, blocked → `blocked`,
 * completed/failed/cancelled → `done`, deleted/archived → none.
 * @example
 * laneOf('cancelled'); // 'done': a cancelled task leaves the active lanes
 */
export const laneOf = (status: TaskStatus): TaskLane | null => LANES[status];

/**
 * The `board` id: session, lane, task (task ids are time-sortable, so a lane lists in submit order).
 * @example
 * await reader.list<BoardEntry>(TaskBoardCollections.board, { prefix: boardLanePrefix(sessionId, 'active') });
 */
export const boardKey = (sessionId: string, lane: TaskLane, taskId: string): string =>
  `${boardLanePrefix(sessionId, lane)}${taskId}`;
/** The prefix of one lane of a session's board. */
export const boardLanePrefix = (sessionId: string, lane: TaskLane): string => `${sessionId}/${lane}/`;
/** The prefix of a session's whole board (and of its `by-session` entries). */
export const sessionPrefix = (sessionId: string): string => `${sessionId}/`;

/**
 * The `by-session` id: session then task.
 * @example
 * const all = await reader.list<SessionTaskEntry>(TaskBoardCollections.bySession, { prefix: sessionPrefix(sessionId) });
 * const visible = all.filter((t) => !t.hidden);
 */
export const sessionTaskKey = (sessionId: string, taskId: string): string => `${sessionPrefix(sessionId)}${taskId}`;
