import type { Clock, EventRegistry, IdGenerator } from '@demiurge/contracts';
import type { EventStore, Projector } from '@demiurge/event-store';
import type { DatabaseClock, DatabaseClockOptions } from './database-clock.js';
import type { ChainHead, ChainReport } from './hash-chain.js';

export interface PostgresEventStoreOptions {
  /** `postgres://user:password@host:port/database`; the database must exist (the schema is created in it). */
  readonly url: string;
  readonly registry?: EventRegistry;
  readonly projectors?: readonly Projector[];
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** Pool size for reads and the append in flight (plus one LISTEN connection). Default 4. */
  readonly maxConnections?: number;
  /** How long opening a connection may take before a {@link StoreUnavailableError}. Default 10 000 ms. */
  readonly connectTimeoutMs?: number;
  /**
   * Send parameterized queries as named prepared statements (parsed and planned once per connection). Default
   * true; set false behind a pooler that cannot keep prepared statements (PgBouncer in transaction mode before
   * 1.21).
   */
  readonly preparedStatements?: boolean;
  /**
   * Projection documents kept in memory as this store's last commit left them, so that the next append's
   * projectors do not load them again while no other writer (another host, a rebuild) has written since.
   * Default 5000; 0 turns the cache off.
   */
  readonly cachedDocuments?: number;
  /** Events per transaction when catching projectors up at open. Default 5000. */
  readonly catchUpBatchSize?: number;
  /**
   * For a deterministic simulation only (default false): the store's reads and append turns run one at a time,
   * in the order they reach it, the event loop turning once after each, and the store listens for no
   * notifications (another host's commits are published before this store's next own commit). The same calls
   * then give the same log whatever the server's timing. Slower, and blind to other hosts until it appends.
   */
  readonly lockstep?: boolean;
  /** Told about errors of idle pooled connections (the pool drops them and opens new ones). */
  readonly onConnectionError?: (error: Error) => void;
}

/** The PostgreSQL event store: an {@link EventStore} with its (password-free) URL and the log's hash chain. */
export interface PostgresEventStore extends EventStore {
  /** The server and database, without the password. */
  readonly url: string;
  /** The head of the log's hash chain: the last event's position and hash (hex); the same chain as SQLite's. */
  chainHead(): Promise<ChainHead>;
  /** Recomputes every event's hash in batches and names the first position that does not match. */
  verifyChain(options?: { batchSize?: number; kept?: ChainHead }): Promise<ChainReport>;
  /**
   * A {@link DatabaseClock} on this store's pool: the server's `clock_timestamp()`, sampled (shortest of 3 round
   * trips, again every 30 s) and kept as an offset to a monotonic local reading. Pass it as the runtime's clock
   * when the store is PostgreSQL, so every host judges leases and due times by the same time.
   *
   * @example
   * const clock = await store.databaseClock();
   * const work = new DurableWorkRuntime({ store, clock, ids, owner: 'host-1' });
   */
  databaseClock(options?: DatabaseClockOptions): Promise<DatabaseClock>;
  /**
   * The statements this store has in flight or waiting for a connection of its pool (appends, reads, the
   * reads a notification starts); 0 when it waits for nothing from the server. Changes nothing: a simulation
   * reads it to know the runtime settled (nothing in flight over several turns of the event loop).
   *
   * @example
   * while (store.pendingQueries() > 0) await new Promise((resolve) => setImmediate(resolve));
   */
  pendingQueries(): number;
}
