import type { RecordedEvent } from '@demiurge/contracts';
import {
  type AppendOptions,
  type AppendStream,
  type EventStore,
  StreamVersionConflictError,
} from '@demiurge/event-store';
import { assertTransition, type Lifecycle } from '@demiurge/lifecycle';

/** An aggregate loaded from its stream: the machine's state, the stream version, and its events. */
export interface Loaded<S extends string> {
  readonly streamId: string;
  readonly state: S;
  readonly version: number;
  readonly events: readonly RecordedEvent[];
}

/** Folds a stream through its lifecycle machine (the only transition table). */
export async function loadAggregate<S extends string, E extends string>(
  store: EventStore,
  lifecycle: Lifecycle<S, E>,
  streamId: string,
): Promise<Loaded<S>> {
  const events = await store.readStream(streamId);
  let state = lifecycle.initialState;
  for (const event of events) {
    if (event.streamType !== lifecycle.streamType) break;
    state = assertTransition(lifecycle, state, event as never, streamId);
  }
  return { streamId, state, version: events.length, events };
}

/** One stream's part of a decision: the events to append at the version the decision read. */
export function streamAppend(streamType: string, loaded: Loaded<string>, events: AppendStream['events']): AppendStream {
  return {
    streamType,
    streamId: loaded.streamId,
    expectedVersion: loaded.version === 0 ? 'no_stream' : loaded.version,
    events,
  };
}

/**
 * Runs load → decide → append, retrying from a fresh load when another writer moved one of the
 * streams in between (optimistic concurrency). `attempt` returns the streams to append (none: a no-op).
 */
export async function commandLoop<T>(
  store: EventStore,
  attempt: () => Promise<{ streams: AppendStream[]; result: T; options?: AppendOptions }>,
  tries = 8,
): Promise<T> {
  for (let i = 1; ; i++) {
    const { streams, result, options } = await attempt();
    const nonEmpty = streams.filter((s) => s.events.length > 0);
    if (nonEmpty.length === 0) return result;
    try {
      await store.append(nonEmpty, options);
      return result;
    } catch (err) {
      if (!(err instanceof StreamVersionConflictError) || i >= tries) throw err;
    }
  }
}
