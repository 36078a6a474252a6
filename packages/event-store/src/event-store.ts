import type { EventMeta, EventRegistry, NewEvent, RecordedEvent } from '@demiurge/contracts';
import type { Observable } from 'rxjs';
import type { DecidedAppend, DecidedAppendResult } from './decided-append.js';
import type { ExpectedVersion } from './errors.js';
import type { ProjectionReader, ProjectorCheckpoint } from './projector.js';

/** Events for one stream in an append, with the version the stream must be at. */
export interface AppendStream {
  readonly streamType: string;
  readonly streamId: string;
  readonly expectedVersion: ExpectedVersion;
  readonly events: readonly NewEvent[];
}

export interface AppendOptions {
  /**
   * Makes the append idempotent: a second append with the same key returns the events the first
   * recorded and appends nothing, whatever it carries.
   */
  readonly idempotencyKey?: string;
  /** Meta merged into every event's meta (an event's own meta wins). The actor defaults to the system. */
  readonly meta?: Partial<EventMeta>;
}

export interface AppendResult {
  /** The recorded events, in position order. */
  readonly events: readonly RecordedEvent[];
  /** The position of the last event. */
  readonly lastPosition: number;
  /** True when the idempotency key had been used: nothing new was appended. */
  readonly replayed: boolean;
}

export interface ReadStreamOptions {
  /** First version to read (1-based, inclusive). */
  readonly fromVersion?: number;
  readonly limit?: number;
}

export interface ReadAllOptions {
  /** First position to read (inclusive); default 1. */
  readonly from?: number;
  /** Only these event types. */
  readonly types?: readonly string[];
  readonly limit?: number;
}

export interface IterateOptions extends Omit<ReadAllOptions, 'limit'> {
  /** Events read per batch; memory stays bounded by it. Default 1000. */
  readonly batchSize?: number;
}

export interface SubscribeOptions {
  /** First position to deliver (inclusive). Omit for live events only. */
  readonly from?: number;
  readonly types?: readonly string[];
}

export interface RebuildProgress {
  readonly projectors: readonly string[];
  /** The last position applied. */
  readonly position: number;
  /** The log's head when the rebuild started. */
  readonly head: number;
  readonly eventsApplied: number;
}

export interface RebuildOptions {
  /** Projector names; default all registered. */
  readonly projectors?: readonly string[];
  readonly batchSize?: number;
  readonly onProgress?: (progress: RebuildProgress) => void;
}

export interface RebuildReport {
  readonly projectors: readonly ProjectorCheckpoint[];
  readonly eventsApplied: number;
  readonly durationMs: number;
}

/**
 * The append-only event log with inline projections.
 *
 * @example
 * const { events } = await store.append({
 *   streamType: 'session', streamId: sessionId, expectedVersion: 'no_stream',
 *   events: [{ type: 'session.created', data: { sessionId, title: 'Hello', coreId: 'default' } }],
 * });
 */
export interface EventStore {
  readonly registry: EventRegistry;
  /** Appends to one or more streams atomically; resolves only after the commit. */
  append(streams: AppendStream | readonly AppendStream[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * Optional: an append decided under the store's write lock from its read models (see {@link DecidedAppend}).
   * The PostgreSQL store has it (the listings are read in the statement that takes the lock); callers fall back
   * to reading and appending with expected versions where it is absent.
   */
  appendDecided?<R>(request: DecidedAppend<R>): Promise<DecidedAppendResult<R>>;
  /** The current version of a stream (0 when it does not exist). */
  streamVersion(streamId: string): Promise<number>;
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Streams the log in batches, never holding more than one batch. */
  iterate(options?: IterateOptions): AsyncIterable<RecordedEvent>;
  /** The position of the last committed event (0 for an empty log). */
  head(): Promise<number>;
  /** Every event committed from now on, in position order, including other processes' (by tailing). */
  readonly events$: Observable<RecordedEvent>;
  /** A catch-up subscription: history from `from`, then live, without gaps or duplicates. */
  subscribe(options?: SubscribeOptions): Observable<RecordedEvent>;
  /** Read access to a registered projector's documents. */
  projection(name: string): ProjectionReader;
  readonly projectorNames: readonly string[];
  /** Resets projectors and replays the log through them in batches. */
  rebuild(options?: RebuildOptions): Promise<RebuildReport>;
  close(): Promise<void>;
}
