import type { EventDefinition } from '@demiurge/contracts';
import type { AnyStateMachine, SnapshotFrom } from 'xstate';
import { assertTransition } from './assert-transition.js';
import { isLazyMachine, realMachine } from './lazy-machine.js';

/** The pseudo-state of a stream that does not exist yet: its creation event leaves it. */
export const NONE = 'none';

/**
 * An event as a lifecycle machine sees it: the domain event's type and, for the few transitions
 * whose target depends on it (guards), its data.
 * @example
 * const failed: LifecycleEvent<'work.failed'> = { type: 'work.failed', data: { retryAt: '2026-01-01T00:00:10.000Z' } };
 */
export interface LifecycleEvent<T extends string = string> {
  readonly type: T;
  readonly data?: unknown;
}

/**
 * An event type whose repetition a decider treats as a no-op (appends nothing) instead of an
 * error: in any state the event itself leads to (with its data), and in `alsoIn`.
 */
export interface IdempotentRepeat<E extends string = string, S extends string = string> {
  readonly event: E;
  readonly alsoIn?: readonly S[];
}

/** The state names of a lifecycle machine (its flat state keys). */
export type StateOf<M extends AnyStateMachine> = SnapshotFrom<M>['value'] & string;

/**
 * One aggregate's lifecycle: the XState machine that is its only transition table, plus what the
 * docs, `verifyLog` and the deciders need to know about it. Everything else is derived from the machine.
 */
export interface Lifecycle<S extends string = string, E extends string = string> {
  /** The aggregate's name in messages and docs: `task`, `tool call`. */
  readonly aggregate: string;
  /** The `streamType` of the streams holding this aggregate's events. */
  readonly streamType: string;
  /** A heading for the docs: `Task`. */
  readonly title: string;
  /** One paragraph for the docs. */
  readonly summary: string;
  /** The seed invariants this machine enforces, in words (rendered in docs/lifecycle.md). */
  readonly invariants: readonly string[];
  readonly machine: AnyStateMachine;
  /** Always `none`: the state of a stream before its first event. */
  readonly initialState: S;
  /** Every state, `none` first, in the machine's order. */
  readonly states: readonly S[];
  /** The machine's event vocabulary, in the contracts' order. */
  readonly events: readonly E[];
  /** The events that create the aggregate (allowed from `none`). */
  readonly creationEvents: readonly E[];
  readonly idempotent: readonly IdempotentRepeat<E, S>[];
  /**
   * The machine as a state fold: the state after `event` from `state` (`assertTransition`); throws
   * `IllegalTransitionError` naming `streamId` when the machine refuses it. With `streamType` and
   * `initialState` this makes a lifecycle a stream fold for `loadAggregate` in `@demiurge/event-store`.
   */
  evolve(state: S, event: LifecycleEvent<string>, streamId?: string): S;
}

/** What {@link defineLifecycle} needs: the machine, its vocabulary, and the words the docs show. */
export interface LifecycleConfig<M extends AnyStateMachine, E extends string> {
  readonly aggregate: string;
  readonly streamType: string;
  readonly title: string;
  readonly summary: string;
  readonly invariants: readonly string[];
  readonly machine: M;
  /** The contracts' definitions of every event the machine handles, in docs order. */
  readonly vocabulary: readonly EventDefinition<E>[];
  readonly idempotent?: readonly IdempotentRepeat<E, StateOf<M>>[];
}

/**
 * Wraps a flat XState machine as a lifecycle and checks it against its event vocabulary: it must
 * start in `none`, have no nested states, and handle exactly the vocabulary's event types.
 * @example
 * export const lampLifecycle = defineLifecycle({
 *   aggregate: 'lamp', streamType: 'lamp', title: 'Lamp', summary: 'A lamp.', invariants: [],
 *   machine: lampMachine, vocabulary: [LampInstalled, LampSwitched],
 * });
 */
export function defineLifecycle<M extends AnyStateMachine, E extends string>(
  config: LifecycleConfig<M, E>,
): Lifecycle<StateOf<M>, E> {
  const events = config.vocabulary.map((def) => def.type);
  for (const repeat of config.idempotent ?? []) {
    if (!events.includes(repeat.event)) {
      throw new Error(`lifecycle ${config.aggregate}: idempotent event ${repeat.event} is not in the vocabulary`);
    }
  }
  let derived: Derived<M, E> | undefined;
  const derive = (): Derived<M, E> => {
    derived ??= deriveFromMachine(config, events);
    return derived;
  };
  // A machine of `lazySetup` is built (and checked) on first use; any other is checked now.
  if (!isLazyMachine(config.machine)) derive();
  return {
    aggregate: config.aggregate,
    streamType: config.streamType,
    title: config.title,
    summary: config.summary,
    invariants: config.invariants,
    get machine() {
      return derive().machine;
    },
    initialState: NONE as StateOf<M>,
    get states() {
      return derive().states;
    },
    events,
    get creationEvents() {
      return derive().creationEvents;
    },
    idempotent: config.idempotent ?? [],
    evolve(state, event, streamId) {
      return assertTransition(this, state, event as LifecycleEvent<E>, streamId);
    },
  };
}

interface Derived<M extends AnyStateMachine, E extends string> {
  readonly machine: M;
  readonly states: readonly StateOf<M>[];
  readonly creationEvents: readonly E[];
}

/** Builds the machine (when lazy) and checks it against its vocabulary: what the lifecycle reads from it. */
function deriveFromMachine<M extends AnyStateMachine, E extends string>(
  config: LifecycleConfig<M, E>,
  events: readonly E[],
): Derived<M, E> {
  const machine = realMachine(config.machine);
  const root = machine.root;
  if (root.initial?.target[0]?.key !== NONE) {
    throw new Error(`lifecycle ${config.aggregate}: the machine must start in "${NONE}"`);
  }
  const states = Object.keys(root.states) as StateOf<M>[];
  const handled = new Set<string>();
  for (const name of states) {
    const node = root.states[name]!;
    if (Object.keys(node.states).length > 0) {
      throw new Error(`lifecycle ${config.aggregate}: state "${name}" is nested; lifecycle machines are flat`);
    }
    for (const type of node.transitions.keys()) handled.add(type);
  }
  const missing = events.filter((type) => !handled.has(type));
  const extra = [...handled].filter((type) => !events.includes(type as E));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(
      `lifecycle ${config.aggregate}: the machine and its vocabulary differ` +
        (missing.length ? `; never handled: ${missing.join(', ')}` : '') +
        (extra.length ? `; not in the vocabulary: ${extra.join(', ')}` : ''),
    );
  }
  const creationEvents = events.filter((type) => root.states[NONE]!.transitions.has(type));
  return { machine, states, creationEvents };
}
