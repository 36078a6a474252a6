import { type ListTasksOptions, NotFoundError, type TaskRef } from '@demiurge/control-plane';
import { LOG_TAIL_LINES, type TaskView, taskBoardReader } from '@demiurge/projector-task-board';
import { cleanupErrorOf, describeCleanupError } from './cleanup-error.js';
import {
  ExclusiveScopeBusyError,
  NoTaskHandlerError,
  TaskNotOwnedError,
  TaskNotStartableError,
  WorkerClosedError,
} from './errors.js';
import { type LiveTask, type StartResult, startLive } from './live-task.js';
import { scopesOverlap } from './scopes.js';
import { commitOutcome, type OrphanEnding, settleOrphan } from './settlement.js';
import type { TaskOutcome } from './task-handler.js';
import { isFinished, readTaskLogs, type TaskLogs, waitForTask } from './task-reads.js';
import {
  type CloseReport,
  type RecoverReport,
  type RunSubmittedReport,
  type RuntimeTaskWorkerOptions,
  SHUTDOWN_REASON,
} from './worker-options.js';

/**
 * The live worker for detached tasks (seed 003 RuntimeTaskWorker). It keeps in memory only what cannot be
 * durable — live handles, their cancel callbacks and completion subscribers; every read, list, log, wait and
 * cancel result is rebuilt from the log and the task board. Each task ends in exactly one terminal event,
 * committed by one single-flight settlement: concurrent cancels share one cleanup and observe one result.
 *
 * @example
 * ```ts
 * const worker = new RuntimeTaskWorker({ store, clock, ids, controlPlane, host: 'host-1', artifactsDir,
 *   handlers: { 'terminal.exec': terminalExecHandler } });
 * await worker.recover();                       // settle what a previous run of this host left
 * await worker.start({ sessionId, taskId });    // task.started, task.process_started
 * await worker.cancel({ sessionId, taskId }, 'not needed'); // TERM → KILL, then task.cancelled
 * await worker.close();                         // refuse new starts, cancel and drain the rest
 * ```
 */
export class RuntimeTaskWorker {
  private readonly live = new Map<string, LiveTask>();
  private readonly orphans = new Map<string, Promise<TaskView>>();
  private readonly listeners = new Set<(task: TaskView) => void>();
  private closing: Promise<CloseReport> | undefined;
  private watcher: { unsubscribe(): void } | undefined;
  private readonly graceMs: number;
  private readonly logTailLines: number;

  constructor(private readonly options: RuntimeTaskWorkerOptions) {
    this.graceMs = options.graceMs ?? 2000;
    this.logTailLines = options.logTailLines ?? LOG_TAIL_LINES;
  }

  get host(): string {
    return this.options.host;
  }

  /** The task kinds this worker runs. */
  get kinds(): readonly string[] {
    return Object.keys(this.options.handlers);
  }

  /** Ids of the tasks running here now. */
  activeTaskIds(): string[] {
    return [...this.live.keys()];
  }

  /**
   * Starts a created task of a handled kind: `task.started` (worker = this host), then its handler. Resolves
   * once it runs (its process recorded), with the task as the board shows it. Refused, with nothing appended,
   * once `close()` began (`WorkerClosedError`) and while another running task holds an overlapping exclusive
   * scope (`ExclusiveScopeBusyError`). Starting a task that runs here already returns it.
   */
  async start(ref: TaskRef): Promise<TaskView> {
    if (this.closing) throw new WorkerClosedError(this.host, ref.taskId);
    const view = await this.options.controlPlane.getTask(ref);
    const handler = this.options.handlers[view.kind];
    if (!handler) throw new NoTaskHandlerError(ref.taskId, view.kind, this.kinds);
    // Admission is decided synchronously from here on, so two starts cannot both pass.
    if (this.closing) throw new WorkerClosedError(this.host, ref.taskId);
    const running = this.live.get(ref.taskId);
    if (running && !running.settling) {
      // Started here already (a concurrent start): resolve as that start does.
      await running.started.catch(() => undefined);
      return this.options.controlPlane.getTask(ref);
    }
    if (view.status !== 'created' || running) {
      throw new TaskNotStartableError(
        ref.taskId,
        view.status,
        view.status === 'active' ? `it was started by ${view.worker}` : 'only a created task can be started',
      );
    }
    let prepared: { exclusiveScope?: string } = {};
    let invalid: Error | undefined;
    try {
      prepared = handler.prepare(view);
    } catch (error) {
      invalid = error as Error;
    }
    const scope = prepared.exclusiveScope;
    if (scope !== undefined) {
      for (const other of this.live.values()) {
        if (other.scope !== undefined && scopesOverlap(scope, other.scope)) {
          throw new ExclusiveScopeBusyError(ref.taskId, scope, other.ref.taskId, other.scope);
        }
      }
    }
    const live = startLive({
      ref,
      view,
      handler,
      scope,
      invalid,
      host: this.host,
      store: this.options.store,
      controlPlane: this.options.controlPlane,
      context: {
        host: this.host,
        artifactsDir: this.options.artifactsDir,
        graceMs: this.graceMs,
        logTailLines: this.logTailLines,
        ids: this.options.ids,
        clock: this.options.clock,
      },
      meta: this.options.meta ?? {},
    });
    this.live.set(ref.taskId, live);
    this.watchExternalEnds();
    live.started.then(
      (result) => this.afterStart(live, result),
      () => this.live.delete(ref.taskId), // task.started refused (another worker won): not ours
    );
    const result = await live.started;
    // It ended at once (bad input, could not spawn): resolve with that ending, committed.
    if ('outcome' in result) return this.settleLive(live, ref, { outcome: result.outcome });
    return this.options.controlPlane.getTask(ref);
  }

  /** Starts every created task of a handled kind (of one session, or all), oldest first; refusals are reported. */
  async runSubmitted(options: { sessionId?: string } = {}): Promise<RunSubmittedReport> {
    const entries = await taskBoardReader(this.options.store).board(options.sessionId);
    const started: TaskView[] = [];
    const refused: { taskId: string; error: Error }[] = [];
    const created = entries.filter((e) => e.status === 'created' && this.options.handlers[e.kind]);
    created.sort((a, b) => (a.taskId < b.taskId ? -1 : 1));
    for (const entry of created) {
      try {
        started.push(await this.start({ sessionId: entry.sessionId, taskId: entry.taskId }));
      } catch (error) {
        refused.push({ taskId: entry.taskId, error: error as Error });
      }
    }
    return { started, refused };
  }

  /**
   * Cancels a task. Single-flight: the first call runs the one cleanup (for a process: TERM to the verified
   * tree, KILL after the grace period) and commits one `task.cancelled` whose reason carries the exit status;
   * every concurrent call awaits that same settlement and resolves with the same task. A task that already
   * ended resolves as it ended; a created task is cancelled before it starts; a task of a live other host is
   * refused (`TaskNotOwnedError`).
   */
  async cancel(ref: TaskRef, reason: string): Promise<TaskView> {
    const live = this.live.get(ref.taskId);
    if (live) return this.settleLive(live, ref, { cancel: reason });
    const view = await this.options.controlPlane.getTask(ref);
    const liveNow = this.live.get(ref.taskId); // a start may have registered meanwhile
    if (liveNow) return this.settleLive(liveNow, ref, { cancel: reason });
    if (isFinished(view.status)) return view;
    if (view.status === 'created') return this.options.controlPlane.cancelTask(ref, reason);
    const owner = view.process?.host ?? view.worker;
    if (owner !== null && owner !== this.host && (await this.hostAlive(owner))) {
      throw new TaskNotOwnedError(ref.taskId, owner, this.host);
    }
    return this.settleOrphan(view, { cancel: reason });
  }

  /** Resolves with the task once it is finished, or as it is when `timeoutMs` ran out (read from the board). */
  wait(ref: TaskRef, timeoutMs: number): Promise<TaskView> {
    return waitForTask(this.options.store, this.options.controlPlane, ref, timeoutMs);
  }

  /** A task of the session (from the board). */
  getTask(ref: TaskRef): Promise<TaskView> {
    return this.options.controlPlane.getTask(ref);
  }

  /** The session's tasks (from the board). */
  listTasks(sessionId: string, options?: ListTasksOptions): Promise<TaskView[]> {
    return this.options.controlPlane.listTasks(sessionId, options);
  }

  /** The task's bounded log tail, whether it was truncated, and its full-output artifacts (from the log). */
  logs(ref: TaskRef): Promise<TaskLogs> {
    return readTaskLogs(this.options.store, this.options.controlPlane, ref);
  }

  /** Calls `listener` with each task this worker settles, after its terminal event is committed. */
  onCompletion(listener: (task: TaskView) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Shuts down: admission closes first (a later `start` is refused), then every running task is cancelled
   * with {@link SHUTDOWN_REASON} and drained. Idempotent: a second call returns the first one's report.
   */
  close(): Promise<CloseReport> {
    this.closing ??= this.drain();
    return this.closing;
  }

  private async drain(): Promise<CloseReport> {
    const cancelled: TaskView[] = [];
    const errors: { taskId: string; error: Error }[] = [];
    await Promise.all(
      [...this.live.values()].map(async (live) => {
        try {
          cancelled.push(await this.settleLive(live, live.ref, { cancel: SHUTDOWN_REASON }));
        } catch (error) {
          errors.push({ taskId: live.ref.taskId, error: error as Error });
        }
      }),
    );
    await Promise.allSettled([...this.orphans.values()]);
    this.watcher?.unsubscribe();
    this.watcher = undefined;
    return { cancelled, errors };
  }

  /**
   * Settles unfinished tasks whose owner is gone — this host (a previous run of it) or a host `isHostAlive`
   * says is dead: the handler stops the recorded process tree only if its start marker still matches (a reused
   * pid is never signalled), then the task fails with a reason (`owner_lost`). Call it at start, before `start`.
   */
  async recover(): Promise<RecoverReport> {
    const reader = taskBoardReader(this.options.store);
    const entries = await reader.board();
    const settled: { taskId: string; message: string }[] = [];
    const skipped: { taskId: string; owner: string | null }[] = [];
    for (const entry of entries) {
      if (!['active', 'waiting', 'blocked'].includes(entry.status) || this.live.has(entry.taskId)) continue;
      const view = await reader.get(entry.taskId);
      if (!view) continue;
      const owner = view.process?.host ?? view.worker;
      if (owner !== null && owner !== this.host && (await this.hostAlive(owner))) {
        skipped.push({ taskId: view.taskId, owner });
        continue;
      }
      const after = await this.settleOrphan(view, { fail: owner ?? 'an unknown host' });
      settled.push({ taskId: view.taskId, message: after.error?.message ?? after.cancelReason ?? after.status });
    }
    return { settled, skipped };
  }

  // --- internals ------------------------------------------------------------------------------

  private hostAlive(host: string): Promise<boolean> {
    return Promise.resolve(this.options.isHostAlive ? this.options.isHostAlive(host) : true);
  }

  private afterStart(live: LiveTask, result: StartResult): void {
    const ended = 'running' in result ? result.running.finished : Promise.resolve(result.outcome);
    ended
      .catch(
        (error: unknown): TaskOutcome => ({
          status: 'failed',
          error: { code: 'handler_failed', message: messageOf(error) },
        }),
      )
      .then((outcome) => this.settleLive(live, live.ref, { outcome }))
      .catch((error: unknown) => this.reportError(live.ref.taskId, error));
  }

  /** An error no caller awaits: a settlement that failed (the task stays unfinished until `recover()`), a listener. */
  private reportError(taskId: string, error: unknown): void {
    if (this.options.onError) this.options.onError(error, taskId);
    else process.emitWarning(`task ${taskId}: ${messageOf(error)}`, { code: 'DEMIURGE_TASK_WORKER' });
  }

  /** The one settlement of a live task: one cleanup, one terminal event, then completion subscribers. */
  private settleLive(
    live: LiveTask,
    ref: TaskRef,
    how: { readonly cancel: string } | { readonly outcome: TaskOutcome },
  ): Promise<TaskView> {
    if (live.ref.sessionId !== ref.sessionId) return Promise.reject(new NotFoundError('task', ref.taskId));
    live.settling ??= (async () => {
      let result: StartResult;
      try {
        result = await live.started;
      } catch {
        // Its task.started was refused: it never ran here. Cancel it as any task not running here.
        this.live.delete(ref.taskId);
        if ('cancel' in how) return this.cancel(ref, how.cancel);
        return this.options.controlPlane.getTask(ref);
      }
      let outcome: TaskOutcome;
      if ('outcome' in how) outcome = how.outcome;
      else if ('running' in result) {
        try {
          outcome = await result.running.stop(how.cancel);
        } catch (error) {
          // The handler's cleanup threw: the task is cancelled at once all the same, the error recorded.
          const cleanupError = cleanupErrorOf(error);
          outcome = {
            status: 'cancelled',
            reason: `${how.cancel} (${describeCleanupError(cleanupError)})`,
            cleanupError,
          };
        }
      } else outcome = result.outcome;
      try {
        return this.announce(await commitOutcome(this.options.controlPlane, ref, outcome));
      } finally {
        live.facts.seal(); // nothing more lands on an ended task (a cleanup that failed may leave output coming)
        this.live.delete(ref.taskId);
      }
    })();
    return live.settling;
  }

  private async settleOrphan(view: TaskView, how: OrphanEnding): Promise<TaskView> {
    const existing = this.orphans.get(view.taskId);
    if (existing) return existing;
    const settling = settleOrphan(view, how, {
      controlPlane: this.options.controlPlane,
      handler: this.options.handlers[view.kind],
      recover: {
        host: this.host,
        graceMs: this.graceMs,
        kill: this.options.kill ?? ((pid, signal) => process.kill(pid, signal)),
      },
    }).then((after) => this.announce(after));
    this.orphans.set(view.taskId, settling);
    try {
      return await settling;
    } finally {
      this.orphans.delete(view.taskId);
    }
  }

  /** Tells completion subscribers; one that throws is reported, never allowed to undo a committed ending. */
  private announce(view: TaskView): TaskView {
    for (const listener of this.listeners) {
      try {
        listener(view);
      } catch (error) {
        this.reportError(view.taskId, error);
      }
    }
    return view;
  }

  /**
   * A task running here that reaches a terminal state without this worker (someone called the control plane
   * directly): its facts are sealed and its work is stopped, so no process outlives its task.
   */
  private watchExternalEnds(): void {
    if (this.watcher) return;
    this.watcher = this.options.store.events$.subscribe({
      next: (event) => {
        if (event.type !== 'task.cancelled' && event.type !== 'task.failed' && event.type !== 'task.completed') return;
        const live = this.live.get(event.streamId);
        if (!live || live.settling) return;
        live.facts.seal();
        live.settling = (async () => {
          try {
            const result = await live.started;
            if ('running' in result) await result.running.stop('the task ended elsewhere');
          } finally {
            this.live.delete(event.streamId);
          }
          return this.announce(await this.options.controlPlane.getTask(live.ref));
        })();
        live.settling.catch((error: unknown) => this.reportError(event.streamId, error));
      },
    });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
