import type { ColumnType } from 'kysely';

/** A column that is written once and never updated: the log is append-only in its types too. */
type Immutable<T> = ColumnType<T, T, never>;

/** `events`: the same columns as the SQLite store's, so one log moves between the two unchanged. */
export interface EventsTable {
  position: Immutable<number>;
  event_id: Immutable<string>;
  stream_type: Immutable<string>;
  stream_id: Immutable<string>;
  stream_version: Immutable<number>;
  type: Immutable<string>;
  schema_version: Immutable<number>;
  /** JSON as text, byte for byte what was hashed (`jsonb` would reorder keys and break the hash chain). */
  data: Immutable<string>;
  meta: Immutable<string>;
  recorded_at: Immutable<string>;
  idempotency_key: Immutable<string | null>;
  /** SHA-256 over the previous event's hash and this event's content (see `hash-chain.ts`). */
  hash: Immutable<Buffer | null>;
}

/**
 * One row: the last committed position and its hash. Every append locks it (`FOR UPDATE`) for the whole
 * transaction: the serialized position allocator that makes commit order equal position order.
 */
export interface LogHeadTable {
  id: ColumnType<boolean, boolean | undefined, never>;
  position: number;
  hash: Buffer;
}

export interface ProjectorCheckpointsTable {
  name: string;
  version: number;
  position: number;
}

export interface ProjectionDocumentsTable {
  projector: string;
  collection: string;
  id: string;
  doc: string;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: string;
}

export interface StoreSchema {
  events: EventsTable;
  log_head: LogHeadTable;
  projector_checkpoints: ProjectorCheckpointsTable;
  projection_documents: ProjectionDocumentsTable;
  schema_migrations: SchemaMigrationsTable;
}
