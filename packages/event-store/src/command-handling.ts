import { backoffMs, type RecordedEvent } from '@demiurge/contracts';
import { StreamVersionConflictError } from './errors.js';
import type { AppendOptions, AppendStream, EventStore } from './event-store.js';

/**
 * How a stream folds into an aggregate's state: the state before the first event, and `evolve`, pure
 * and synchronous. A lifecycle from `@demiurge/lifecycle` is one (its machine is the fold), and so is
 * any `{ streamType, initialState, evolve }` an aggregate defines.
 */
export interface StreamFold<S> {
  /** Events of another stream type end the fold (a stream holds one aggregate). */
  readonly streamType: string;
  readonly initialState: S;
  evolve(state: S, event: RecordedEvent, streamId: string): S;
}

/** An aggregate loaded from its stream: its folded state, the stream version, and its events. */
export interface Loaded<S> {
  readonly streamId: string;
  readonly state: S;
  /** The stream's version when read (0: no stream), the expected version of the next append. */
  readonly version: number;
  readonly events: readonly RecordedEvent[];
}

/**
 * Reads one stream and folds it.
 * @example
 * const task = await loadAggregate(store, taskLifecycle, taskId); // task.state === 'active', task.version === 3
 */
export async function loadAggregate<S>(store: EventStore, fold: StreamFold<S>, streamId: string): Promise<Loaded<S>> {
  const events = await store.readStream(streamId);
  let state = fold.initialState;
  for (const event of events) {
    if (event.streamType !== fold.streamType) break;
    state = fold.evolve(state, event, streamId);
  }
  return { streamId, state, version: events.length, events };
}

/**
 * One stream's part of a decision: the events to append, expecting the version the decision read.
 * @example
 * streamAppend('task', task, [{ type: 'task.cancelled', data: { taskId, reason } }]);
 */
export function streamAppend(
  streamType: string,
  loaded: Pick<Loaded<unknown>, 'streamId' | 'version'>,
  events: AppendStream['events'],
): AppendStream {
  return {
    streamType,
    streamId: loaded.streamId,
    expectedVersion: loaded.version === 0 ? 'no_stream' : loaded.version,
    events,
  };
}

/** What one pass of a command decided: the streams to append (none, or all empty: a no-op) and its result. */
export interface Decision<T> {
  readonly streams: readonly AppendStream[];
  readonly result: T;
  readonly options?: AppendOptions;
}

/** How {@link commandLoop} retries on a version conflict. */
export interface RetryOptions {
  /** Passes in all, the first included (default 8). */
  readonly maxAttempts?: number;
  /** The first retry waits up to this many ms; each later one doubles it (default 2). */
  readonly baseDelayMs?: number;
  /** The cap on one wait (default 100). */
  readonly maxDelayMs?: number;
  /** Uniform in [0, 1), for the full jitter (default `Math.random`). */
  readonly random?: () => number;
  /** Waits `ms` (default a timer). */
  readonly sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The wait before retry `retry` (1-based): full jitter, uniform in [0, min(max, base * 2^(retry-1))].
 * @example
 * backoffDelay(3, { baseDelayMs: 2, maxDelayMs: 100, random: () => 0.5 }); // 4
 */
export function backoffDelay(retry: number, options: RetryOptions = {}): number {
  return backoffMs(retry, {
    baseMs: options.baseDelayMs ?? 2,
    maxMs: options.maxDelayMs ?? 100,
    ...(options.random ? { random: options.random } : {}),
  });
}

/**
 * Runs load → decide → append with the expected versions the decision read, retrying from a fresh load
 * when another writer moved one of the streams in between (`StreamVersionConflictError`), after a jittered
 * exponential backoff, at most `maxAttempts` passes; then the conflict is thrown. Any other error is thrown
 * at once. `attempt` returns the streams to append (none: a no-op, nothing is written).
 * @example
 * await commandLoop(store, async () => {
 *   const task = await loadAggregate(store, taskLifecycle, taskId);
 *   const events = checkEvents(taskLifecycle, task.state, [{ type: 'task.cancelled', data: { taskId, reason } }], taskId);
 *   return { streams: [streamAppend('task', task, events)], result: events.length > 0 };
 * });
 */
export async function commandLoop<T>(
  store: EventStore,
  attempt: () => Promise<Decision<T>>,
  retry: RetryOptions = {},
): Promise<T> {
  const maxAttempts = retry.maxAttempts ?? 8;
  const sleep = retry.sleep ?? defaultSleep;
  for (let i = 1; ; i++) {
    const { streams, result, options } = await attempt();
    const nonEmpty = streams.filter((s) => s.events.length > 0);
    if (nonEmpty.length === 0) return result;
    try {
      await store.append(nonEmpty, options);
      return result;
    } catch (err) {
      if (!(err instanceof StreamVersionConflictError) || i >= maxAttempts) throw err;
    }
    await sleep(backoffDelay(i, retry));
  }
}
