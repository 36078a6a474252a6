import type { Lifecycle, LifecycleEvent } from './define-lifecycle.js';
import { checkState, machineStep, toLifecycleEvent } from './machine-step.js';

/**
 * The state `event` leads to from `from`, or `undefined` when the machine refuses it. A guarded
 * event (e.g. `work.failed`) needs its data to pick its target.
 * @example
 * nextState(taskLifecycle, 'active', 'task.cancelled'); // 'cancelled'
 * nextState(taskLifecycle, 'deleted', 'task.started'); // undefined
 */
export function nextState<S extends string, E extends string>(
  lifecycle: Lifecycle<S, E>,
  from: NoInfer<S>,
  event: NoInfer<E> | LifecycleEvent<NoInfer<E>>,
): S | undefined {
  return machineStep(lifecycle, from, toLifecycleEvent(event)) as S | undefined;
}

/**
 * The event types the machine accepts in a state (with some data, for guarded ones), in
 * vocabulary order: what an operator UI may offer, and the `allowed` list of a refusal. A function of the
 * machine and the state alone: worked out once per state and shared (frozen), since every projector asks it
 * at every event.
 * @example
 * allowedEvents(taskLifecycle, 'deleted'); // ['task.archived']
 */
export function allowedEvents<S extends string, E extends string>(
  lifecycle: Lifecycle<S, E>,
  state: NoInfer<S>,
): readonly E[] {
  let byState = allowedByState.get(lifecycle) as Map<S, readonly E[]> | undefined;
  if (!byState) {
    byState = new Map();
    allowedByState.set(lifecycle, byState);
  }
  let allowed = byState.get(state);
  if (!allowed) {
    checkState(lifecycle, state);
    const node = lifecycle.machine.root.states[state]!;
    allowed = Object.freeze(lifecycle.events.filter((type) => node.transitions.has(type)));
    byState.set(state, allowed);
  }
  return allowed;
}

const allowedByState = new WeakMap<object, Map<string, readonly string[]>>();

/**
 * Whether the machine accepts `event` in `from`.
 * @example
 * canTransition(taskLifecycle, 'cancelled', 'task.resumed'); // false
 */
export function canTransition<S extends string, E extends string>(
  lifecycle: Lifecycle<S, E>,
  from: NoInfer<S>,
  event: NoInfer<E> | LifecycleEvent<NoInfer<E>>,
): boolean {
  return nextState(lifecycle, from, event) !== undefined;
}
