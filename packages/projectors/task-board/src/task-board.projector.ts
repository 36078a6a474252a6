import { isEvent, type RecordedEvent, taskEvents } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import { allowedEvents, evolveTask, initialTaskFacts, NONE, type TaskFacts, taskLifecycle } from '@demiurge/lifecycle';
import {
  type BoardEntry,
  boardKey,
  LOG_TAIL_LINES,
  laneOf,
  type SessionTaskEntry,
  sessionTaskKey,
  TaskBoardCollections,
  type TaskView,
} from './task.view.js';

const taskEventTypes = taskEvents.map((e) => e.type);

/** The fold's facts of a stored task (the view keeps every fact the fold reads back). */
function factsOf(task: TaskView): TaskFacts {
  return {
    status: task.status,
    taskId: task.taskId,
    sessionId: task.sessionId,
    runId: task.runId,
    parentTaskId: task.parentTaskId,
    kind: task.kind,
    title: task.title,
    input: task.input,
    notifyPolicy: task.notifyPolicy,
    hidden: task.hidden,
    blocked: task.blocked,
    cancelReason: task.cancelReason,
    ...(task.cleanupError ? { cleanupError: task.cleanupError } : {}),
    error: task.error,
    exitCode: task.exitCode,
    summary: task.summary,
    worker: task.worker,
    logTail: task.logTail,
    process: task.process,
    artifacts: task.artifacts,
    completion: task.completion,
    submittedAt: task.submittedAt,
  };
}

/** The view of the task after the fold: its facts, its lane, the time and version of the event, what the machine allows now. */
function viewOf(facts: TaskFacts, event: RecordedEvent): TaskView | undefined {
  const { status, taskId, sessionId, kind, title, submittedAt } = facts;
  if (status === NONE || taskId === null || sessionId === null || kind === null || title === null) return undefined;
  if (submittedAt === null) return undefined;
  return {
    taskId,
    sessionId,
    runId: facts.runId,
    parentTaskId: facts.parentTaskId,
    kind,
    title,
    input: facts.input,
    notifyPolicy: facts.notifyPolicy,
    status,
    lane: laneOf(status),
    hidden: facts.hidden,
    blocked: facts.blocked,
    cancelReason: facts.cancelReason,
    ...(facts.cleanupError ? { cleanupError: facts.cleanupError } : {}),
    error: facts.error,
    exitCode: facts.exitCode,
    summary: facts.summary,
    worker: facts.worker,
    logTail: facts.logTail,
    process: facts.process,
    artifacts: facts.artifacts,
    completion: facts.completion,
    submittedAt,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(taskLifecycle, status),
  };
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
 * Each task is the one task fold (`evolveTask` in `@demiurge/lifecycle`, the same fold the command side loads
 * tasks with): an event the machine refuses, or one for a task never submitted, leaves the read model unchanged.
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
    const facts = evolveTask(task ? factsOf(task) : initialTaskFacts, event);
    const next = facts && viewOf(facts, event);
    if (!next) return;
    writeIndexes(tx, task, next);
    tx.put(TaskBoardCollections.tasks, taskId, next);
  },
});
