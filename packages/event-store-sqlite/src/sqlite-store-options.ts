import type { Clock, EventRegistry, IdGenerator, RecordedEvent } from '@demiurge/contracts';
import type { DamagedStoreError, EventStore, Projector } from '@demiurge/event-store';
import type { ProjectionLag } from './async-projections.js';
import type { ConnectionOptions } from './connection.js';
import type { ChainHead, ChainReport } from './hash-chain.js';

export interface SqliteEventStoreOptions extends ConnectionOptions {
  /** The database file; created with its folder when absent. */
  readonly path: string;
  readonly registry?: EventRegistry;
  readonly projectors?: readonly Projector[];
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** How often another process's commits are looked for while someone subscribes. Default 100 ms. */
  readonly tailIntervalMs?: number;
  /** How long a locked database is retried before `StoreBusyError`. Default 30 000 ms. */
  readonly busyRetryMs?: number;
  /**
   * Target lag of the asynchronous projectors (`mode: 'async'`): what a commit leaves them is applied in a
   * later group commit once it waited a quarter of this long, or in a transaction of its own after this long
   * when no append is queued.
   * Reads through `projection(name)` never see them behind. Default 50 ms.
   */
  readonly asyncProjectionLagMs?: number;
  /**
   * Every group commit waits for the next turn of the event loop, never for a microtask: which appends share a
   * commit then depends on the code alone, not on how long the last turn took. A simulation sets it so one
   * seed always gives the same log; a host leaves it off (the microtask shortcut saves a turn per append).
   */
  readonly deterministicFlush?: boolean;
  /** Events per transaction when catching projectors up at open. Default 5000. */
  readonly catchUpBatchSize?: number;
  /**
   * Told once when the store stops on damage met while in use (fail-stop): from then on every call gets
   * that {@link DamagedStoreError}. A host uses it to stop itself rather than keep refusing every call.
   */
  readonly onDamaged?: (error: DamagedStoreError) => void;
  /**
   * Test hook (crash-point sweeps): told of every commit that appends events, twice: `before` inside the
   * transaction right before `COMMIT`, `after` right after it, before any caller is answered or any subscriber
   * told. It may end the process (a SIGKILL at that point). Unset (the default), it costs nothing.
   */
  readonly onCommit?: CommitHook;
}

/** Where a commit is when the {@link SqliteEventStoreOptions.onCommit} hook is told of it. */
export type CommitPhase = 'before' | 'after';

/** The commit hook: the phase and the events the commit appends (replayed idempotent appends left out). */
export type CommitHook = (phase: CommitPhase, events: readonly RecordedEvent[]) => void;

/** The connection settings in force, read back from SQLite. */
export interface ConnectionSettings {
  readonly journalMode: string;
  /** 2 is FULL, 1 is NORMAL. */
  readonly synchronous: number;
  readonly busyTimeoutMs: number;
  readonly foreignKeys: boolean;
}

/** The SQLite event store: an {@link EventStore} with its file path and connection settings. */
export interface SqliteEventStore extends EventStore {
  readonly path: string;
  settings(): ConnectionSettings;
  /**
   * How far the asynchronous projectors lag behind this store's commits, measured since open or since the
   * last call with `reset: true` (which starts a new measurement of the longest lag).
   */
  projectionLag(options?: { reset?: boolean }): ProjectionLag;
  /**
   * The head of the log's hash chain: the last event's position and its recorded hash (hex). Keep it
   * elsewhere: a later {@link verifyChain} whose chain passes through it proves nothing before it changed.
   */
  chainHead(): Promise<ChainHead>;
  /**
   * Recomputes every event's hash from its stored content and the previous hash, in batches, and names the
   * first position that does not match (an event changed, removed or written behind the store). With `kept`
   * (a head from an earlier {@link chainHead}), also checks that the log still passes through it: the newest
   * events cut off, or a chain recomputed end to end, show there.
   *
   * @example
   * const { ok, firstBreak, kept } = await store.verifyChain({ kept: { position: 41, hash: '6f1c…' } });
   */
  verifyChain(options?: { batchSize?: number; kept?: ChainHead }): Promise<ChainReport>;
}
