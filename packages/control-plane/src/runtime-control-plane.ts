import {
  type Actor,
  type Clock,
  type EventMeta,
  type IdGenerator,
  IdPrefix,
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
  type TaskFacts,
  type TaskState,
  taskFold,
  taskLifecycle,
  workLifecycle,
} from '@demiurge/lifecycle';
import { type TaskView, taskBoardReader } from '@demiurge/projector-task-board';
import { z } from 'zod';
import { noticeRecords } from './completion-notices.js';
import type { DurableWorkRuntime } from './durable-work.js';
import { NotFoundError, parseSpec } from './errors.js';
import { defaultTaskKinds, type KindRegistry, WorkKind } from './kinds.js';
import { type TaskCommand, taskDecider } from './task.decider.js';
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
  private readonly tasks: ReturnType<typeof taskDecider>;

  constructor(private readonly options: ControlPlaneOptions) {
    this.kinds = options.kinds ?? defaultTaskKinds;
    this.tasks = taskDecider({ noticeWorkId: () => options.ids.next(IdPrefix.work) });
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

  /**
   * Cancels a task (before or after it started); repeating it is a no-op.
   * `cleanupError`: the task's cleanup failed (its type and message are recorded); it is cancelled all the same.
   */
  cancelTask(
    ref: TaskRef,
    reason: string,
    details: { cleanupError?: { type: string; message: string } } = {},
  ): Promise<TaskView> {
    return this.command({ type: 'cancel', ...target(ref), reason, ...details });
  }

  /** Deletes a cancelled task: hidden from every active view, kept for audit. Repeating is a no-op. */
  deleteTask(ref: TaskRef, reason?: string): Promise<TaskView> {
    return this.command({ type: 'delete', ...target(ref), ...(reason ? { reason } : {}) });
  }

  archiveTask(ref: TaskRef): Promise<TaskView> {
    return this.command({ type: 'archive', ...target(ref) });
  }

  blockTask(ref: TaskRef, reason: string, resumable: boolean): Promise<TaskView> {
    return this.command({ type: 'block', ...target(ref), reason, resumable });
  }

  /** Resumes a waiting or blocked task; a blocked task marked not resumable is refused. */
  resumeTask(ref: TaskRef): Promise<TaskView> {
    return this.command({ type: 'resume', ...target(ref) });
  }

  // --- worker-facing transitions (RuntimeTaskWorker) -------------------------------------------

  startTask(ref: TaskRef, worker: string): Promise<TaskView> {
    return this.command({ type: 'start', ...target(ref), worker });
  }

  /**
   * `task.started` as a stream for a caller's own commit (a child agent's admission starts its task in the
   * commit that opens its session, run and turn). Machine-checked like {@link startTask}: a task that is not
   * `created` (another worker started it) is refused with `IllegalTransitionError`. Load it again per attempt.
   */
  async startTaskStream(ref: TaskRef, worker: string): Promise<AppendStream> {
    const task = await loadAggregate(this.options.store, taskFold, ref.taskId);
    if (task.state.sessionId !== ref.sessionId) throw new NotFoundError('task', ref.taskId);
    return streamAppend(TASK, task, this.tasks.decide({ type: 'start', ...target(ref), worker }, task.state));
  }

  waitTask(ref: TaskRef, reason: string): Promise<TaskView> {
    return this.command({ type: 'wait', ...target(ref), reason });
  }

  logTask(ref: TaskRef, stream: 'stdout' | 'stderr' | 'progress', text: string): Promise<TaskView> {
    return this.command({ type: 'log', ...target(ref), stream, text });
  }

  completeTask(ref: TaskRef, result: { summary?: string; exitCode?: number } = {}): Promise<TaskView> {
    return this.command({ type: 'complete', ...target(ref), ...result });
  }

  failTask(ref: TaskRef, error: { code: string; message: string }, exitCode?: number): Promise<TaskView> {
    return this.command({ type: 'fail', ...target(ref), error, ...(exitCode === undefined ? {} : { exitCode }) });
  }

  // --- internals ------------------------------------------------------------------------------

  /**
   * Settles the task's unacknowledged notices (`work.cancelled`) for the commit that deletes or archives it:
   * nobody is told about a task that is gone, and no notice of it stays pending.
   */
  private async settleNotices(task: Loaded<TaskFacts>, reason: string): Promise<AppendStream[]> {
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

  /**
   * load (the task fold) → decide ({@link taskDecider}: machine-checked, idempotent repeats dropped, the
   * notice of a task that ends or becomes blocked included) → append. The notice's `task.completion` work
   * item is enqueued in the same commit; deleting or archiving a task settles its pending notices in it too.
   */
  private async command(command: TaskCommand): Promise<TaskView> {
    await commandLoop(this.options.store, async () => {
      const task = await loadAggregate(this.options.store, taskFold, command.taskId);
      const events = this.tasks.decide(command, task.state);
      if (events.length === 0) return { streams: [], result: undefined };
      const streams: AppendStream[] = [];
      for (const event of events) {
        if (event.type === 'task.completion_ready' && event.data.workId) {
          const { taskId, workId } = event.data;
          streams.push(
            this.options.work.enqueueStream({
              workId,
              kind: WorkKind.taskCompletion,
              subjectId: taskId,
              payload: { taskId },
            }).stream,
          );
        }
        if (event.type === 'task.deleted' || event.type === 'task.archived') {
          const gone = event.type === 'task.deleted' ? 'deleted' : 'archived';
          streams.push(...(await this.settleNotices(task, `the task was ${gone}`)));
        }
      }
      return {
        streams: [streamAppend(TASK, task, events), ...streams],
        result: undefined,
        options: {
          meta: {
            actor: { kind: 'system', id: 'control-plane' },
            sessionId: command.sessionId,
            ...this.options.meta,
          },
        },
      };
    });
    return this.getTask(command);
  }
}

/** The target of a task command. */
const target = (ref: TaskRef) => ({ taskId: ref.taskId, sessionId: ref.sessionId });
