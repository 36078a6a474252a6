import type { EventMeta } from '@demiurge/contracts';
import type { RuntimeControlPlane, TaskRef } from '@demiurge/control-plane';
import type { EventStore } from '@demiurge/event-store';
import type { TaskView } from '@demiurge/projector-task-board';
import { ExclusiveScopeBusyError } from './errors.js';
import { createTaskFacts, type SealableTaskFacts } from './task-facts.js';
import type { RunningTask, TaskContext, TaskHandler, TaskOutcome } from './task-handler.js';

/** How a start went: the task runs, or it ended at once with an outcome to commit (bad input, spawn failure). */
export type StartResult = { readonly running: RunningTask } | { readonly outcome: TaskOutcome };

/**
 * The in-memory part of a task running here: its handle, its scope, and its one settlement. Nothing in it is
 * a source of truth; every answer is read back from the log.
 */
export interface LiveTask {
  readonly ref: TaskRef;
  readonly scope: string | undefined;
  readonly facts: SealableTaskFacts;
  /** Rejects only when `task.started` itself was refused (the task never ran here). */
  readonly started: Promise<StartResult>;
  /** Set by the first of cancel / natural end / shutdown; every later caller awaits it. */
  settling: Promise<TaskView> | undefined;
}

export interface StartLiveOptions {
  readonly ref: TaskRef;
  readonly view: TaskView;
  readonly handler: TaskHandler;
  readonly scope: string | undefined;
  /** The input could not be read: the task starts and fails at once with `invalid_input`. */
  readonly invalid: Error | undefined;
  readonly host: string;
  readonly store: EventStore;
  readonly controlPlane: RuntimeControlPlane;
  readonly context: Omit<TaskContext, 'task' | 'ref' | 'facts' | 'startStream'>;
  readonly meta: Partial<EventMeta>;
}

/** Registers nothing itself: returns the live task whose `started` runs `task.started` and the handler. */
export function startLive(options: StartLiveOptions): LiveTask {
  const { ref } = options;
  const facts = createTaskFacts(options.store, ref, options.meta);
  const { controlPlane, handler, host } = options;
  const startStream = () => controlPlane.startTaskStream(ref, host);
  const startFailed = (error: unknown): StartResult => {
    const message = error instanceof Error ? error.message : String(error);
    return { outcome: { status: 'failed', error: { code: 'start_failed', message } } };
  };
  const started = (async (): Promise<StartResult> => {
    if (handler.startsTask && !options.invalid) {
      try {
        return { running: await handler.start({ ...options.context, task: options.view, ref, facts, startStream }) };
      } catch (error) {
        // A scope held elsewhere refused its first commit: nothing was appended, the task stays created.
        if (error instanceof ExclusiveScopeBusyError) throw error;
        // Its first commit started the task, or not: then start it here to fail it, unless another worker did.
        const view = await controlPlane.getTask(ref);
        if (view.status === 'created') await controlPlane.startTask(ref, host);
        else if (view.worker !== host) throw error;
        return startFailed(error);
      }
    }
    const view = await controlPlane.startTask(ref, host);
    if (options.invalid) {
      return { outcome: { status: 'failed', error: { code: 'invalid_input', message: options.invalid.message } } };
    }
    try {
      return { running: await handler.start({ ...options.context, task: view, ref, facts, startStream }) };
    } catch (error) {
      return startFailed(error);
    }
  })();
  return { ref, scope: options.scope, facts, started, settling: undefined };
}
