import type { Clock, EventMeta, IdGenerator } from '@demiurge/contracts';
import type { RuntimeControlPlane } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import type { TaskView } from '@demiurge/projector-task-board';
import type { KillFn } from './process-tree.js';
import type { TaskHandler } from './task-handler.js';

export interface RuntimeTaskWorkerOptions {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly controlPlane: RuntimeControlPlane;
  /** This host's id: recorded as the worker of `task.started` and the host of `task.process_started`. */
  readonly host: string;
  /** Where tasks' full output streams go (`<artifactsDir>/<taskId>/…`). */
  readonly artifactsDir: string;
  /** One handler per task kind this worker runs, e.g. `{ 'terminal.exec': terminalExecHandler }`. */
  readonly handlers: Readonly<Record<string, TaskHandler>>;
  /** Between SIGTERM and SIGKILL when a process tree is stopped. Default 2000 ms. */
  readonly graceMs?: number;
  /** Output lines per log batch. Default `LOG_TAIL_LINES` (what the task board keeps). */
  readonly logTailLines?: number;
  /**
   * Whether another host is alive. `recover()` settles tasks of this host and of hosts this says are dead.
   * Default: every other host is alive (its tasks are never touched).
   */
  readonly isHostAlive?: (host: string) => boolean | Promise<boolean>;
  /** How `recover()` signals orphaned process trees. Default `process.kill`. */
  readonly kill?: KillFn;
  readonly meta?: Partial<EventMeta>;
  /**
   * Called with errors no caller awaits: a natural end whose commit failed (the task then stays unfinished in
   * the log until `recover()` settles it), a completion listener that threw. Default: a process warning.
   */
  readonly onError?: (error: unknown, taskId: string) => void;
}

/** What `runSubmitted` did. */
export interface RunSubmittedReport {
  readonly started: readonly TaskView[];
  /** Created tasks it could not start now (exclusive scope busy, admission closed...), with why. */
  readonly refused: readonly { readonly taskId: string; readonly error: Error }[];
}

/** What `close` did: the tasks it cancelled and drained, and any that failed to settle. */
export interface CloseReport {
  readonly cancelled: readonly TaskView[];
  readonly errors: readonly { readonly taskId: string; readonly error: Error }[];
}

/** What `recover` did. */
export interface RecoverReport {
  /** Tasks failed because their owner (this host before a restart, or a dead host) is gone. */
  readonly settled: readonly { readonly taskId: string; readonly message: string }[];
  /** Unfinished tasks left alone: running on a host that is alive. */
  readonly skipped: readonly { readonly taskId: string; readonly owner: string | null }[];
}

/** The reason `close()` cancels with. */
export const SHUTDOWN_REASON = 'host shutting down';
