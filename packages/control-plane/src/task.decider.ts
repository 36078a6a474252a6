import type { NewEventOfType, RecordedEvent } from '@demiurge/contracts';
import {
  checkEvents,
  initialTaskFacts,
  nextState,
  type TaskEventType,
  type TaskFacts,
  type TaskState,
  taskFold,
  taskLifecycle,
} from '@demiurge/lifecycle';
import { completionWorkId, type NoticeOutcome } from './completion-notices.js';
import { NotFoundError, NotResumableError } from './errors.js';

/** A task event a command appends, typed by the contracts' schemas. */
export type NewTaskEvent = NewEventOfType<TaskEventType>;

/** Which task, for whom: task commands are scoped to the owner session (another session's task is "no such task"). */
interface TaskTarget {
  readonly taskId: string;
  readonly sessionId: string;
}

/** The commands on one task (submitting aside: `RuntimeControlPlane.submitTask` creates the stream). */
export type TaskCommand = TaskTarget &
  (
    | { readonly type: 'cancel'; readonly reason: string; readonly cleanupError?: { type: string; message: string } }
    | { readonly type: 'delete'; readonly reason?: string }
    | { readonly type: 'archive' }
    | { readonly type: 'block'; readonly reason: string; readonly resumable: boolean }
    | { readonly type: 'resume' }
    | { readonly type: 'start'; readonly worker: string }
    | { readonly type: 'wait'; readonly reason: string }
    | { readonly type: 'log'; readonly stream: 'stdout' | 'stderr' | 'progress'; readonly text: string }
    | { readonly type: 'complete'; readonly summary?: string; readonly exitCode?: number }
    | { readonly type: 'fail'; readonly error: { code: string; message: string }; readonly exitCode?: number }
  );

const TERMINAL: readonly TaskState[] = ['completed', 'failed', 'cancelled'];

/** The events a command wants, before the machine checks them. */
function wanted(command: TaskCommand, task: TaskFacts): NewTaskEvent[] {
  const { taskId } = command;
  switch (command.type) {
    case 'cancel': {
      const { reason, cleanupError } = command;
      return [{ type: 'task.cancelled', data: { taskId, reason, ...(cleanupError ? { cleanupError } : {}) } }];
    }
    case 'delete':
      return [{ type: 'task.deleted', data: { taskId, ...(command.reason ? { reason: command.reason } : {}) } }];
    case 'archive':
      return [{ type: 'task.archived', data: { taskId } }];
    case 'block':
      return [{ type: 'task.blocked', data: { taskId, reason: command.reason, resumable: command.resumable } }];
    case 'resume':
      if (task.status === 'blocked' && task.blocked && !task.blocked.resumable) {
        throw new NotResumableError(taskId, task.blocked.reason);
      }
      return [{ type: 'task.resumed', data: { taskId } }];
    case 'start':
      return [{ type: 'task.started', data: { taskId, worker: command.worker } }];
    case 'wait':
      return [{ type: 'task.waiting', data: { taskId, reason: command.reason } }];
    case 'log':
      return [{ type: 'task.log', data: { taskId, stream: command.stream, text: command.text } }];
    case 'complete': {
      const { summary, exitCode } = command;
      const result = { ...(summary === undefined ? {} : { summary }), ...(exitCode === undefined ? {} : { exitCode }) };
      return [{ type: 'task.completed', data: { taskId, ...result } }];
    }
    case 'fail': {
      const { error, exitCode } = command;
      return [{ type: 'task.failed', data: { taskId, error, ...(exitCode === undefined ? {} : { exitCode }) } }];
    }
  }
}

/**
 * The task decider. `decide` takes a command and the task's facts (the task fold's) and returns the events
 * to append, checked by the task machine (`IllegalTransitionError` for a refused one; an idempotent repeat
 * appends nothing). A task that ends (completed, failed, cancelled) or becomes blocked gets its completion
 * notice (`task.completion_ready`, naming its `task.completion` work item) in the same decision, unless its
 * notify policy is `silent`: the final notice has the task's derived work id, a block's notice a new one
 * (`noticeWorkId`). Pure given `noticeWorkId`; `RuntimeControlPlane` loads, decides with it and appends.
 * Throws `NotFoundError` for a task never submitted or owned by another session, `NotResumableError` for
 * resuming a task blocked as not resumable.
 * @example
 * const tasks = taskDecider({ noticeWorkId: () => ids.next('wrk') });
 * tasks.decide({ type: 'cancel', taskId, sessionId, reason: 'stop' }, task.state); // task.cancelled + its notice
 */
export function taskDecider(options: { noticeWorkId: () => string }) {
  return {
    initialState: initialTaskFacts,
    evolve: (task: TaskFacts, event: RecordedEvent): TaskFacts => taskFold.evolve(task, event),
    decide(command: TaskCommand, task: TaskFacts): NewTaskEvent[] {
      const { taskId } = command;
      if (task.status === 'none' || task.sessionId !== command.sessionId) throw new NotFoundError('task', taskId);
      const events = checkEvents(taskLifecycle, task.status, wanted(command, task), taskId);
      let state: TaskState = task.status;
      for (const e of events) state = nextState(taskLifecycle, state, { type: e.type, data: e.data }) ?? state;
      const ended = TERMINAL.includes(state) && !TERMINAL.includes(task.status);
      const blocked = state === 'blocked' && task.status !== 'blocked';
      if (!(ended || blocked) || task.notifyPolicy === 'silent') return events;
      // One final notice per task (its derived work id, which yield_until claims); one per block.
      const workId = ended ? completionWorkId(taskId) : options.noticeWorkId();
      const notice: NewTaskEvent = {
        type: 'task.completion_ready',
        data: { taskId, outcome: state as NoticeOutcome, workId },
      };
      return [...events, ...checkEvents(taskLifecycle, state, [notice], taskId)];
    },
  };
}
