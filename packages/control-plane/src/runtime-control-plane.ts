import {
  type Actor,
  asDomainEvent,
  type Clock,
  type EventMeta,
  type IdGenerator,
  IdPrefix,
  type NewEvent,
  SessionId,
  TaskId,
} from '@demiurge/contracts';
import {
  type AppendStream,
  commandLoop,
  type EventStore,
  type Loaded,
  loadAggregate,
  StreamVersionConflictError,
  streamAppend,
} from '@demiurge/event-store';
import {
  checkEvents,
  nextState,
  type TaskEventType,
  type TaskState,
  taskLifecycle,
  workLifecycle,
} from '@demiurge/lifecycle';
import { type TaskView, taskBoardReader } from '@demiurge/projector-task-board';
import { z } from 'zod';
import { completionWorkId, type NoticeOutcome, noticeRecords } from './completion-notices.js';
import type { DurableWorkRuntime } from './durable-work.js';
import { NotFoundError, NotResumableError, parseSpec } from './errors.js';
import { defaultTaskKinds, type KindRegistry, WorkKind } from './kinds.js';
import { loadWork } from './work-aggregate.js';

/** What `submitTask` takes; `input` is validated by the kind's schema. */
export const TaskSpec = z.object({
  taskId: TaskId.optional(),
  sessionId: SessionId,
  runId: z.string().min(1).optional(),
  parentTaskId: TaskId.optional(),
  kind: z.string().min(1),
  title: z.string().min(1).max(200),
  input: z.unknown(),
  notifyPolicy: z.enum(['return_to_parent', 'silent']).default('return_to_parent'),
});
export type TaskSpec = z.input<typeof TaskSpec>;

/** Who asks: task reads and commands are scoped to the owner session. */
export interface TaskRef {
  readonly sessionId: string;
  readonly taskId: string;
}

export interface ListTasksOptions {
  /** Include deleted tasks (hidden from every active view, kept for audit). Default false. */
  readonly includeHidden?: boolean;
  readonly kind?: string;
  readonly status?: readonly TaskState[];
}

export interface ControlPlaneOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** Enqueues the `task.completion` work item in the same commit as a task's end. */
  readonly work: DurableWorkRuntime;
  readonly kinds?: KindRegistry;
  readonly meta?: Partial<EventMeta>;
}

const TASK = taskLifecycle.streamType;
const TERMINAL: readonly TaskState[] = ['completed', 'failed', 'cancelled'];

interface TaskAggregate extends Loaded<TaskState> {
  readonly sessionId: string | null;
  readonly notifyPolicy: 'return_to_parent' | 'silent';
  readonly blocked: { reason: string; resumable: boolean } | null;
}

/** The work states in which a notice is still unsettled (deleting or archiving its task cancels it). */
const UNSETTLED = ['queued', 'claimed', 'running', 'retry_scheduled'];

/**
 * The host-owned seam for detached tasks (seed 003 RuntimeControlPlane): the task ledger of
 * `agent.spawn`, `terminal.exec`, `evolver.run` and `schedule.fire`. Every change is a `task.*`
 * event checked by the task machine; reads come from the task-board projection. Tasks are scoped to
 * their owner session: another session's task reads exactly like a missing one.
 *
 * @example
 * const task = await controlPlane.submitTask({ sessionId, kind: 'terminal.exec', title: 'ls', input: { command: 'ls' } });
 * await controlPlane.cancelTask({ sessionId, taskId: task.taskId }, 'not needed');
 */
export class RuntimeControlPlane {
  readonly kinds: KindRegistry;

  constructor(private readonly options: ControlPlaneOptions) {
    this.kinds = options.kinds ?? defaultTaskKinds;
  }

  /** `by`: who submits (e.g. a model acting in the session), recorded as the actor; default the control plane. */
  async submitTask(spec: TaskSpec, by?: Actor): Promise<TaskView> {
    const parsed = parseSpec('task spec', TaskSpec, spec);
    const input = parseSpec(`${parsed.kind} input`, this.kinds.schema(parsed.kind), parsed.input, ['input']);
    const taskId = parsed.taskId ?? this.options.ids.next(IdPrefix.task);
    const data = { ...parsed, taskId, input };
    try {
      await this.options.store.append(
        {
          streamType: TASK,
          streamId: taskId,
          expectedVersion: 'no_stream',
          events: [{ type: 'task.submitted', data }],
        },
        {
          meta: {
            actor: { kind: 'system', id: 'control-plane' },
            sessionId: parsed.sessionId,
            ...this.options.meta,
            ...(by ? { actor: by } : {}),
          },
        },
      );
    } catch (err) {
      // Submitting a task id that exists is a no-op for its own session (and "no such task" for another).
      if (!(err instanceof StreamVersionConflictError)) throw err;
    }
    return this.getTask({ sessionId: parsed.sessionId, taskId });
  }

  /** A task of the session, from the task board (deleted tasks included, for audit). */
  async getTask(ref: TaskRef): Promise<TaskView> {
    const view = await taskBoardReader(this.options.store).get(ref.taskId);
    if (!view || view.sessionId !== ref.sessionId) throw new NotFoundError('task', ref.taskId);
    return view;
  }

  /** The session's tasks, oldest first; deleted ones only with `includeHidden`. */
  async listTasks(sessionId: string, options: ListTasksOptions = {}): Promise<TaskView[]> {
    const reader = taskBoardReader(this.options.store);
    const refs = await reader.ofSession(sessionId);
    const views: TaskView[] = [];
    for (const ref of refs) {
      if (ref.hidden && !options.includeHidden) continue;
      const view = await reader.get(ref.taskId);
      if (!view) continue;
      if (options.kind && view.kind !== options.kind) continue;
      if (options.status && !options.status.includes(view.status)) continue;
      views.push(view);
    }
    return views;
  }

  /** Cancels a task (before or after it started); repeating it is a no-op. */
  /** `cleanupError`: the task's cleanup failed (its type and message are recorded); it is cancelled all the same. */
  cancelTask(
    ref: TaskRef,
    reason: string,
    details: { cleanupError?: { type: string; message: string } } = {},
  ): Promise<TaskView> {
    return this.command(ref, () => [
      {
        type: 'task.cancelled',
        data: { taskId: ref.taskId, reason, ...(details.cleanupError ? { cleanupError: details.cleanupError } : {}) },
      },
    ]);
  }

  /** Deletes a cancelled task: hidden from every active view, kept for audit. Repeating is a no-op. */
  deleteTask(ref: TaskRef, reason?: string): Promise<TaskView> {
    return this.command(ref, () => [
      { type: 'task.deleted', data: { taskId: ref.taskId, ...(reason ? { reason } : {}) } },
    ]);
  }

  archiveTask(ref: TaskRef): Promise<TaskView> {
    return this.command(ref, () => [{ type: 'task.archived', data: { taskId: ref.taskId } }]);
  }

  blockTask(ref: TaskRef, reason: string, resumable: boolean): Promise<TaskView> {
    return this.command(ref, () => [{ type: 'task.blocked', data: { taskId: ref.taskId, reason, resumable } }]);
  }

  /** Resumes a waiting or blocked task; a blocked task marked not resumable is refused. */
  resumeTask(ref: TaskRef): Promise<TaskView> {
    return this.command(ref, (task) => {
      if (task.state === 'blocked' && task.blocked && !task.blocked.resumable) {
        throw new NotResumableError(ref.taskId, task.blocked.reason);
      }
      return [{ type: 'task.resumed', data: { taskId: ref.taskId } }];
    });
  }

  // --- worker-facing transitions (RuntimeTaskWorker) -------------------------------------------

  startTask(ref: TaskRef, worker: string): Promise<TaskView> {
    return this.command(ref, () => [{ type: 'task.started', data: { taskId: ref.taskId, worker } }]);
  }

  waitTask(ref: TaskRef, reason: string): Promise<TaskView> {
    return this.command(ref, () => [{ type: 'task.waiting', data: { taskId: ref.taskId, reason } }]);
  }

  logTask(ref: TaskRef, stream: 'stdout' | 'stderr' | 'progress', text: string): Promise<TaskView> {
    return this.command(ref, () => [{ type: 'task.log', data: { taskId: ref.taskId, stream, text } }]);
  }

  completeTask(ref: TaskRef, result: { summary?: string; exitCode?: number } = {}): Promise<TaskView> {
    return this.command(ref, () => [{ type: 'task.completed', data: { taskId: ref.taskId, ...result } }]);
  }

  failTask(ref: TaskRef, error: { code: string; message: string }, exitCode?: number): Promise<TaskView> {
    return this.command(ref, () => [
      { type: 'task.failed', data: { taskId: ref.taskId, error, ...(exitCode === undefined ? {} : { exitCode }) } },
    ]);
  }

  // --- internals ------------------------------------------------------------------------------

  /**
   * Settles the task's unacknowledged notices (`work.cancelled`) for the commit that deletes or archives it:
   * nobody is told about a task that is gone, and no notice of it stays pending.
   */
  private async settleNotices(task: TaskAggregate, reason: string): Promise<AppendStream[]> {
    const streams: AppendStream[] = [];
    for (const notice of noticeRecords(task.events, task.streamId)) {
      if (notice.acknowledged) continue;
      const item = await loadWork(this.options.store, notice.workId);
      if (!UNSETTLED.includes(item.state)) continue;
      streams.push(
        streamAppend(
          workLifecycle.streamType,
          item,
          checkEvents(
            workLifecycle,
            item.state,
            [{ type: 'work.cancelled', data: { workId: notice.workId, reason } }],
            notice.workId,
          ),
        ),
      );
    }
    return streams;
  }

  private async load(ref: TaskRef): Promise<TaskAggregate> {
    const loaded = await loadAggregate(this.options.store, taskLifecycle, ref.taskId);
    let sessionId: string | null = null;
    let notifyPolicy: TaskAggregate['notifyPolicy'] = 'return_to_parent';
    let blocked: TaskAggregate['blocked'] = null;
    for (const recorded of loaded.events) {
      const event = asDomainEvent(recorded);
      if (event.type === 'task.submitted') {
        sessionId = event.data.sessionId;
        notifyPolicy = event.data.notifyPolicy ?? 'return_to_parent';
      }
      if (event.type === 'task.blocked') blocked = { reason: event.data.reason, resumable: event.data.resumable };
      if (event.type === 'task.resumed') blocked = null;
    }
    if (loaded.state === 'none' || sessionId !== ref.sessionId) throw new NotFoundError('task', ref.taskId);
    return { ...loaded, sessionId, notifyPolicy, blocked };
  }

  /**
   * load → decide (machine-checked; idempotent repeats dropped) → append. A task that reaches a
   * terminal state gets its completion notice (`task.completion_ready` + a `task.completion` work
   * item) in the same commit, and so does a task that becomes blocked (it needs the user), unless its
   * notify policy is `silent`. Deleting or archiving a task settles its pending notices in the same commit.
   */
  private async command(ref: TaskRef, decide: (task: TaskAggregate) => NewEvent<TaskEventType>[]): Promise<TaskView> {
    await commandLoop(this.options.store, async () => {
      const task = await this.load(ref);
      const events = checkEvents(taskLifecycle, task.state, decide(task), ref.taskId);
      if (events.length === 0) return { streams: [], result: undefined };
      let state: TaskState = task.state;
      for (const e of events)
        state = nextState(taskLifecycle, state, { type: e.type as TaskEventType, data: e.data }) ?? state;
      const streams: AppendStream[] = [];
      const ended = TERMINAL.includes(state) && !TERMINAL.includes(task.state);
      const blocked = state === 'blocked' && task.state !== 'blocked';
      if ((ended || blocked) && task.notifyPolicy !== 'silent') {
        // One final notice per task (its derived work id, which yield_until claims); one per block.
        const workId = ended ? completionWorkId(ref.taskId) : this.options.ids.next(IdPrefix.work);
        events.push({
          type: 'task.completion_ready',
          data: { taskId: ref.taskId, outcome: state as NoticeOutcome, workId },
        });
        streams.push(
          this.options.work.enqueueStream({
            workId,
            kind: WorkKind.taskCompletion,
            subjectId: ref.taskId,
            payload: { taskId: ref.taskId },
          }).stream,
        );
      }
      if ((state === 'deleted' || state === 'archived') && task.state !== state) {
        streams.push(...(await this.settleNotices(task, `the task was ${state}`)));
      }
      return {
        streams: [streamAppend(TASK, task, events), ...streams],
        result: undefined,
        options: {
          meta: { actor: { kind: 'system', id: 'control-plane' }, sessionId: ref.sessionId, ...this.options.meta },
        },
      };
    });
    return this.getTask(ref);
  }
}
