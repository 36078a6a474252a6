import type { Clock, EventRegistry, IdGenerator } from '@demiurge/contracts';
import type { EventStore, Projector } from '@demiurge/event-store';
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
  /** Events per transaction when catching projectors up at open. Default 5000. */
  readonly catchUpBatchSize?: number;
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
}
