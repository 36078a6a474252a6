import type { Lifecycle, LifecycleEvent } from './define-lifecycle.js';
import { IllegalTransitionError } from './errors.js';
import { machineStep, toLifecycleEvent } from './machine-step.js';
import { allowedEvents } from './transitions.js';

/**
 * Checks `event` against the machine in state `from` and returns the next state; throws
 * {@link IllegalTransitionError} (naming `streamId`, the state and the allowed events) when refused.
 * @example
 * const next = assertTransition(taskLifecycle, 'active', { type: 'task.blocked', data }, taskId); // 'blocked'
 * assertTransition(taskLifecycle, 'deleted', 'task.started', taskId);
 * // throws: task tsk_… is deleted; task.started is not allowed; allowed: task.archived
 */
export function assertTransition<S extends string, E extends string>(
  lifecycle: Lifecycle<S, E>,
  from: NoInfer<S>,
  event: NoInfer<E> | LifecycleEvent<NoInfer<E>>,
  streamId?: string,
): S {
  const evt = toLifecycleEvent(event);
  const next = machineStep(lifecycle, from, evt);
  if (next === undefined) {
    throw new IllegalTransitionError(lifecycle.aggregate, streamId, from, evt.type, allowedEvents(lifecycle, from), {
      unknownEvent: !lifecycle.events.includes(evt.type as E),
    });
  }
  return next as S;
}
