import { isEvent } from '@demiurge/contracts';
import type { RuntimeControlPlane, TaskRef } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import type { TaskArtifact, TaskLogLine, TaskStatus, TaskView } from '@demiurge/projector-task-board';
import { TRUNCATION_MARK } from './log-tail.js';

const FINISHED: readonly TaskStatus[] = ['completed', 'failed', 'cancelled', 'deleted', 'archived'];
const TERMINAL_EVENTS = new Set(['task.completed', 'task.failed', 'task.cancelled', 'task.deleted', 'task.archived']);

/** Whether a task has ended (it will not run again). */
export function isFinished(status: TaskStatus): boolean {
  return FINISHED.includes(status);
}

/**
 * Resolves with the task once it has ended, or as it is when `timeoutMs` ran out. Reads come from the board;
 * the store's event stream (other processes' commits included) only says when to read again.
 */
export async function waitForTask(
  store: EventStore,
  controlPlane: RuntimeControlPlane,
  ref: TaskRef,
  timeoutMs: number,
): Promise<TaskView> {
  const first = await controlPlane.getTask(ref);
  if (isFinished(first.status)) return first;
  let subscription: { unsubscribe(): void } | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const ended = new Promise<void>((resolve) => {
      subscription = store.events$.subscribe({
        next: (event) => {
          if (event.streamId === ref.taskId && TERMINAL_EVENTS.has(event.type)) resolve();
        },
      });
      timer = setTimeout(resolve, Math.max(0, timeoutMs));
    });
    // It may have ended between the first read and the subscription.
    const again = await controlPlane.getTask(ref);
    if (isFinished(again.status)) return again;
    await ended;
    return await controlPlane.getTask(ref);
  } finally {
    subscription?.unsubscribe();
    clearTimeout(timer);
  }
}

/** A task's log as the worker reports it. */
export interface TaskLogs {
  readonly taskId: string;
  readonly status: TaskStatus;
  /** The bounded tail the board keeps, oldest first. */
  readonly lines: readonly TaskLogLine[];
  /** Lines were omitted or cut (a truncation notice is in the log); the artifacts have everything. */
  readonly truncated: boolean;
  /** `task.log` events recorded in all. */
  readonly logEvents: number;
  /** The full output streams (and any other recorded products). */
  readonly artifacts: readonly TaskArtifact[];
}

/** Reads a task's log: the tail from the board, the truncation flag and event count from its stream. */
export async function readTaskLogs(
  store: EventStore,
  controlPlane: RuntimeControlPlane,
  ref: TaskRef,
): Promise<TaskLogs> {
  const view = await controlPlane.getTask(ref);
  const logs = (await store.readStream(ref.taskId)).filter((e) => isEvent(e, 'task.log'));
  const truncated = logs.some((e) => isEvent(e, 'task.log') && e.data.text.startsWith(TRUNCATION_MARK));
  return {
    taskId: view.taskId,
    status: view.status,
    lines: view.logTail,
    truncated,
    logEvents: logs.length,
    artifacts: view.artifacts,
  };
}
