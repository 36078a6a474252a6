import type { EventMeta, NewEvent } from '@demiurge/contracts';
import type { TaskRef } from '@demiurge/control-plane';
import { commandLoop, type EventStore, loadAggregate, streamAppend } from '@demiurge/event-store';
import { checkEvents, type TaskEventType, taskLifecycle } from '@demiurge/lifecycle';
import type { TaskArtifactData, TaskProcessData } from '@demiurge/projector-task-board';
import type { TailLine } from './log-tail.js';

/**
 * The facts a running task records about itself that are not transitions — its process
 * (`task.process_started`), its artifacts (`task.artifact_recorded`) and its log tail (`task.log`, a batch in
 * one commit) — appended in call order, each checked by the task machine (so nothing lands on a task that is
 * no longer active). Terminal transitions go through `RuntimeControlPlane`, which adds the completion notice.
 */
export interface TaskFacts {
  readonly ref: TaskRef;
  processStarted(data: TaskProcessData): Promise<void>;
  artifactRecorded(data: TaskArtifactData): Promise<void>;
  /** One commit of `task.log` events; an empty batch appends nothing. */
  log(lines: readonly TailLine[]): Promise<void>;
  /** Resolves once every append asked for so far has settled. */
  settled(): Promise<void>;
}

/** A {@link TaskFacts} the worker can seal: after `seal()` (the task ended elsewhere) appends are skipped. */
export interface SealableTaskFacts extends TaskFacts {
  seal(): void;
  readonly sealed: boolean;
}

const TASK = taskLifecycle.streamType;

export function createTaskFacts(store: EventStore, ref: TaskRef, meta: Partial<EventMeta>): SealableTaskFacts {
  let chain: Promise<unknown> = Promise.resolve();
  let sealed = false;
  const write = (events: NewEvent<TaskEventType>[]) =>
    commandLoop(store, async () => {
      const task = await loadAggregate(store, taskLifecycle, ref.taskId);
      const kept = checkEvents(taskLifecycle, task.state, events, ref.taskId);
      return {
        streams: [streamAppend(TASK, task, kept)],
        result: undefined,
        options: { meta: { actor: { kind: 'system', id: 'task-worker' }, sessionId: ref.sessionId, ...meta } },
      };
    });
  const append = (events: NewEvent<TaskEventType>[]): Promise<void> => {
    const run = chain.then(() => (sealed || events.length === 0 ? undefined : write(events)));
    chain = run.catch(() => undefined); // the caller gets the error; later appends still run
    return run;
  };
  const { taskId } = ref;
  return {
    ref,
    get sealed() {
      return sealed;
    },
    seal() {
      sealed = true;
    },
    processStarted: (data) => append([{ type: 'task.process_started', data: { taskId, ...data } }]),
    artifactRecorded: (data) => append([{ type: 'task.artifact_recorded', data: { taskId, ...data } }]),
    log: (lines) => append(lines.map((l) => ({ type: 'task.log', data: { taskId, stream: l.stream, text: l.text } }))),
    settled: () => chain.then(() => undefined),
  };
}
