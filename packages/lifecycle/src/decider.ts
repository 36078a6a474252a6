import type { NewEvent } from '@demiurge/contracts';
import { assertTransition } from './assert-transition.js';
import type { Lifecycle, LifecycleEvent } from './define-lifecycle.js';
import { machineStep, toLifecycleEvent } from './machine-step.js';

/**
 * Whether `event` repeats an idempotent command whose outcome already holds in `state` (the
 * aggregate is already cancelled, deleted, archived...): the machine refuses it, the event type is
 * declared idempotent, and the event (with its data) leads into `state` from some state, or `state`
 * is one of the repeat's `alsoIn` states.
 * @example
 * isIdempotentRepeat(taskLifecycle, 'cancelled', { type: 'task.cancelled', data }); // true
 * isIdempotentRepeat(taskLifecycle, 'completed', { type: 'task.cancelled', data }); // false: refused
 */
export function isIdempotentRepeat<S extends string, E extends string>(
  lifecycle: Lifecycle<S, E>,
  state: NoInfer<S>,
  event: NoInfer<E> | LifecycleEvent<NoInfer<E>>,
): boolean {
  const evt = toLifecycleEvent(event);
  const repeat = lifecycle.idempotent.find((candidate) => candidate.event === evt.type);
  if (!repeat || machineStep(lifecycle, state, evt) !== undefined) return false;
  if (repeat.alsoIn?.includes(state)) return true;
  return lifecycle.states.some((from) => from !== state && machineStep(lifecycle, from, evt) === state);
}

/**
 * Machine-checks the events a command wants to append, in order, from `state`: an idempotent
 * repeat is dropped (appends nothing), any other refused event throws `IllegalTransitionError`.
 * @example
 * checkEvents(taskLifecycle, 'cancelled', [{ type: 'task.cancelled', data: { taskId, reason: 'again' } }], taskId); // []
 */
export function checkEvents<S extends string, E extends string, V extends NewEvent<E>>(
  lifecycle: Lifecycle<S, E>,
  state: NoInfer<S>,
  events: readonly V[],
  streamId?: string,
): V[] {
  const kept: V[] = [];
  let current: S = state;
  for (const event of events) {
    if (isIdempotentRepeat(lifecycle, current, event)) continue;
    current = assertTransition(lifecycle, current, event, streamId);
    kept.push(event);
  }
  return kept;
}

/**
 * The state of an aggregate after its recorded events (a stream replayed through the machine),
 * starting from `none`. Throws `IllegalTransitionError` on an event the machine refuses.
 * @example
 * const state = foldState(taskLifecycle, await store.readStream(taskId), taskId); // 'active'
 */
export function foldState<S extends string, E extends string>(
  lifecycle: Lifecycle<S, E>,
  events: Iterable<LifecycleEvent<string>>,
  streamId?: string,
): S {
  let state = lifecycle.initialState;
  for (const event of events) state = assertTransition(lifecycle, state, event as LifecycleEvent<E>, streamId);
  return state;
}

/**
 * An Emmett-style decider over a lifecycle: pure and synchronous. `decide` returns only
 * machine-checked events (idempotent repeats dropped); `evolve` is the machine's transition.
 */
export interface LifecycleDecider<C, S extends string, E extends string> {
  readonly lifecycle: Lifecycle<S, E>;
  readonly initialState: S;
  decide(command: C, state: S): NewEvent<E>[];
  /** The machine's transition; an event it refuses (or does not know) throws `IllegalTransitionError`. */
  evolve(state: S, event: LifecycleEvent<string>): S;
}

/** A command handler's decision, before the machine checks it: see {@link createDecider}. */
export interface DeciderSpec<C, S extends string, E extends string> {
  /** The stream a command targets, named in refusals. */
  streamId(command: C): string;
  /** The events the command wants to append in `state`; the decider machine-checks them. */
  decide(command: C, state: S): readonly NewEvent<E>[];
}

/**
 * Builds a command handler's decider: load state (fold the stream with `evolve`) → `decide`
 * (machine-checked) → events to append. An empty result means "nothing to do" (an idempotent repeat).
 * @example
 * const cancelTask = createDecider(taskLifecycle, {
 *   streamId: (c: { taskId: TaskId; reason: string }) => c.taskId,
 *   decide: (c) => [{ type: 'task.cancelled', data: { taskId: c.taskId, reason: c.reason } }],
 * });
 * const events = cancelTask.decide(command, foldState(taskLifecycle, stream, command.taskId));
 */
export function createDecider<C, S extends string, E extends string>(
  lifecycle: Lifecycle<S, E>,
  spec: DeciderSpec<C, NoInfer<S>, NoInfer<E>>,
): LifecycleDecider<C, S, E> {
  return {
    lifecycle,
    initialState: lifecycle.initialState,
    decide: (command, state) => checkEvents(lifecycle, state, spec.decide(command, state), spec.streamId(command)),
    evolve: (state, event) => lifecycle.evolve(state, event),
  };
}
