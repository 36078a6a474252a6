import type { Clock, IdGenerator } from '@demiurge/contracts';
import type { TaskRef } from '@demiurge/control-plane';
import type { AppendStream } from '@demiurge/event-store';
import type { TaskView } from '@demiurge/projector-task-board';
import type { KillFn } from './process-tree.js';
import type { TaskFacts } from './task-facts.js';

/** How a task ended, as its handler reports it; the worker commits it as the one terminal event. */
export type TaskOutcome =
  | { readonly status: 'completed'; readonly exitCode?: number; readonly summary?: string }
  | {
      readonly status: 'failed';
      readonly error: { readonly code: string; readonly message: string };
      readonly exitCode?: number;
    }
  | {
      readonly status: 'cancelled';
      readonly reason: string;
      /** The cleanup failed (e.g. killing the process tree): the error's type and message, recorded. */
      readonly cleanupError?: { readonly type: string; readonly message: string };
    };

/** What a handler gets to run one task. */
export interface TaskContext {
  readonly task: TaskView;
  readonly ref: TaskRef;
  /** This host's id (recorded with any process it starts). */
  readonly host: string;
  /** Where full output streams go: `<artifactsDir>/<taskId>/…`. */
  readonly artifactsDir: string;
  /** How long a process tree gets between SIGTERM and SIGKILL. */
  readonly graceMs: number;
  /** How many lines of output a log batch keeps. */
  readonly logTailLines: number;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  /** Records the task's process, artifacts and log tail. */
  readonly facts: TaskFacts;
  /**
   * For a handler that `startsTask`: the task's `task.started`, as a stream for the handler's own first commit
   * (built again on each call; refused with `IllegalTransitionError` once the task is not `created`).
   */
  readonly startStream: () => Promise<AppendStream>;
}

/**
 * A started task: the live handle the worker keeps in memory (nothing else about a task lives in memory).
 * `finished` resolves when the work ends by itself — successfully, with an error, on its own timeout, or
 * because its output could not be persisted — with everything it produced already recorded. `stop` is the
 * cleanup: the worker calls it at most once per task (single-flight), and it resolves only once the work is
 * gone and its artifacts are recorded. If the work already ended by itself, `stop` resolves with that outcome.
 */
export interface RunningTask {
  readonly finished: Promise<TaskOutcome>;
  stop(reason: string): Promise<TaskOutcome>;
}

/** What `prepare` learns from a task's input before anything is appended. */
export interface PreparedTask {
  /**
   * A scope the task writes exclusively, e.g. a resolved directory. While the task runs, a second task whose
   * scope is the same (or nested in it, or around it) is refused.
   */
  readonly exclusiveScope?: string;
}

/** What `recover` may use. */
export interface RecoverContext {
  readonly host: string;
  readonly graceMs: number;
  readonly kill: KillFn;
}

/**
 * One task kind's runner, registered with the worker as `handlers: { [kind]: handler }`.
 *
 * @example
 * ```ts
 * const worker = new RuntimeTaskWorker({ ..., handlers: { 'terminal.exec': terminalExecHandler } });
 * ```
 */
export interface TaskHandler {
  /**
   * Reads the task's input; throws (e.g. `InvalidSpecError`) when it cannot run — the worker then fails the
   * task with `invalid_input`. Synchronous: admission decisions must not interleave.
   */
  prepare(task: TaskView): PreparedTask;
  /**
   * The handler commits `task.started` itself, in its first commit (`ctx.startStream`): `start` resolves only
   * once that commit is made, and gets the task as it was `created`. Otherwise the worker commits
   * `task.started` before `start`. Such a `start` may throw `ExclusiveScopeBusyError` before its first commit
   * (a scope it claims durably is held, e.g. by another host): the task stays `created`, `worker.start` throws it.
   */
  readonly startsTask?: boolean;
  /** Starts the task; rejects when it could not start (the worker then fails it with `start_failed`). */
  start(ctx: TaskContext): Promise<RunningTask>;
  /**
   * Settles what a dead owner left behind (e.g. stops a recorded process tree whose start marker still
   * matches) and says what happened, for the failure message. Never signals an unverified process.
   */
  recover?(task: TaskView, ctx: RecoverContext): Promise<string>;
}
