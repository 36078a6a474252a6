import { asDomainEvent, type EventOfType, isEvent, type RecordedEvent, taskEvents } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import { allowedEvents, NONE, nextState, type TaskEventType, type TaskState, taskLifecycle } from '@demiurge/lifecycle';
import {
  type BoardEntry,
  boardKey,
  LOG_TAIL_LINES,
  laneOf,
  type SessionTaskEntry,
  sessionTaskKey,
  TaskBoardCollections,
  type TaskStatus,
  type TaskView,
} from './task.view.js';

const taskEventTypes = taskEvents.map((e) => e.type);

function created(event: EventOfType<'task.submitted'>, status: TaskStatus): TaskView {
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
    status,
    lane: laneOf(status),
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
    submittedAt: event.recordedAt,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(taskLifecycle, status),
  };
}

/** The fields one accepted event sets. */
function changes(task: TaskView, recorded: RecordedEvent): Partial<TaskView> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'task.started':
      return { worker: event.data.worker };
    case 'task.blocked': {
      const d = event.data;
      return { blocked: { reason: d.reason, resumable: d.resumable } };
    }
    case 'task.completed': {
      const d = event.data;
      return { summary: d.summary ?? null, exitCode: d.exitCode ?? null };
    }
    case 'task.failed': {
      const d = event.data;
      return { error: d.error, exitCode: d.exitCode ?? null };
    }
    case 'task.cancelled': {
      const d = event.data;
      return { cancelReason: d.reason, ...(d.cleanupError ? { cleanupError: d.cleanupError } : {}) };
    }
    case 'task.deleted':
      return { hidden: true };
    case 'task.log': {
      const d = event.data;
      const line = { stream: d.stream, text: d.text, at: event.recordedAt };
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

function evolve(task: TaskView, event: RecordedEvent, status: TaskStatus): TaskView {
  const next: TaskView = {
    ...task,
    ...changes(task, event),
    status,
    lane: laneOf(status),
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(taskLifecycle, status),
  };
  return status === 'blocked' ? next : { ...next, blocked: null };
}

const boardEntry = (t: TaskView): { id: string; doc: BoardEntry } | undefined =>
  t.lane === null
    ? undefined
    : {
        id: boardKey(t.sessionId, t.lane, t.taskId),
        doc: { taskId: t.taskId, sessionId: t.sessionId, lane: t.lane, status: t.status, kind: t.kind, title: t.title },
      };

/** Moves the task's board and by-session entries when its status or visibility changed. */
function writeIndexes(tx: ProjectionTx, before: TaskView | undefined, after: TaskView): void {
  if (before && before.status === after.status && before.hidden === after.hidden) return;
  const old = before && boardEntry(before);
  const now = boardEntry(after);
  if (old && old.id !== now?.id) tx.delete(TaskBoardCollections.board, old.id);
  if (now) tx.put(TaskBoardCollections.board, now.id, now.doc);
  const entry: SessionTaskEntry = { taskId: after.taskId, status: after.status, hidden: after.hidden };
  tx.put(TaskBoardCollections.bySession, sessionTaskKey(after.sessionId, after.taskId), entry);
}

/**
 * The task board: every detached task (`tasks`), the lanes of each session's board (`board`), and each
 * session's task list (`by-session`). Cancelled tasks move to the `done` lane; deleted tasks are hidden
 * and in no lane but stay in `tasks` for audit; each task keeps the last {@link LOG_TAIL_LINES} log lines,
 * its OS process (`task.process_started`) and its artifacts (`task.artifact_recorded`).
 * Statuses come from the task machine (`nextState`); an event it refuses, or one for a task never
 * submitted, leaves the read model unchanged.
 */
export const taskBoardProjector = defineProjector({
  name: 'task-board',
  // 3: blocked, active and waiting tasks allow notice events (allowed lists changed): rebuilt on open.
  version: 3,
  handles: taskEvents.map((e) => e.type),
  apply(event, tx) {
    if (!isEvent(event, ...taskEventTypes)) return;
    const { taskId } = event.data;
    const task = tx.get<TaskView>(TaskBoardCollections.tasks, taskId);
    const from: TaskState = task?.status ?? NONE;
    const to = nextState(taskLifecycle, from, { type: event.type as TaskEventType, data: event.data });
    if (to === undefined || to === NONE) return;
    const next = task ? evolve(task, event, to) : isEvent(event, 'task.submitted') ? created(event, to) : undefined;
    if (!next) return;
    writeIndexes(tx, task, next);
    tx.put(TaskBoardCollections.tasks, taskId, next);
  },
});
