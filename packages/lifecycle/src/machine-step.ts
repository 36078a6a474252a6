import type { AnyMachineSnapshot } from 'xstate';
import type { Lifecycle, LifecycleEvent } from './define-lifecycle.js';

/**
 * Asks a lifecycle's machine where an event leads, purely: the state's snapshot is resolved with
 * `machine.resolveState`, and the enabled transition (guards evaluated on the event) is selected by
 * `machine.getTransitionData`, the selection that `snapshot.can` and xstate's pure `transition` use.
 * No actor is ever created. (The tests check every answer against `transition` itself, which is
 * about 40 times slower because it also computes actions and a full snapshot.)
 *
 * Answers for (state, event type) pairs without a guard are memoized per machine, so replaying a
 * large log asks xstate once per pair; guarded pairs (whose target depends on the event's data)
 * are asked every time. The memo is a cache of the machine's answers, not a second table.
 */
interface MachineCache {
  readonly snapshots: Map<string, AnyMachineSnapshot>;
  /** `state \0 type` → next state, or null when refused. */
  readonly memo: Map<string, string | null>;
}

const caches = new WeakMap<Lifecycle, MachineCache>();

function cacheOf(lifecycle: Lifecycle): MachineCache {
  let cache = caches.get(lifecycle);
  if (!cache) {
    cache = { snapshots: new Map(), memo: new Map() };
    caches.set(lifecycle, cache);
  }
  return cache;
}

/** Throws a RangeError for a state the machine does not have (a programming or data error). */
export function checkState(lifecycle: Lifecycle, state: string): void {
  if (!lifecycle.states.includes(state)) {
    throw new RangeError(`"${state}" is not a ${lifecycle.aggregate} state; states: ${lifecycle.states.join(', ')}`);
  }
}

function snapshotOf(lifecycle: Lifecycle, cache: MachineCache, state: string): AnyMachineSnapshot {
  let snapshot = cache.snapshots.get(state);
  if (!snapshot) {
    checkState(lifecycle, state);
    snapshot = lifecycle.machine.resolveState({ value: state, context: {} });
    cache.snapshots.set(state, snapshot);
  }
  return snapshot;
}

function isGuarded(lifecycle: Lifecycle, state: string, type: string): boolean {
  const candidates = lifecycle.machine.root.states[state]?.transitions.get(type) ?? [];
  return candidates.some((candidate) => candidate.guard !== undefined);
}

/** Normalizes an event given as its type or as `{ type, data }`. */
export function toLifecycleEvent(event: string | LifecycleEvent): LifecycleEvent {
  return typeof event === 'string' ? { type: event } : event;
}

/** The state the machine moves to on `event` from `state`, or `undefined` when it refuses the event. */
export function machineStep(lifecycle: Lifecycle, state: string, event: LifecycleEvent): string | undefined {
  const cache = cacheOf(lifecycle);
  const key = `${state}\u0000${event.type}`;
  const memoized = cache.memo.get(key);
  if (memoized !== undefined) return memoized ?? undefined;
  const snapshot = snapshotOf(lifecycle, cache, state);
  const xstateEvent = { type: event.type, data: event.data };
  const enabled = lifecycle.machine.getTransitionData(snapshot, xstateEvent)[0];
  const next = enabled?.target ? enabled.target[0]!.key : undefined;
  if (!isGuarded(lifecycle, state, event.type)) cache.memo.set(key, next ?? null);
  return next;
}
