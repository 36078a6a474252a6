import { type ColumnType, DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';

/** A column that is written once and never updated: the log is append-only in its types too. */
type Immutable<T> = ColumnType<T, T, never>;

export interface EventsTable {
  position: ColumnType<number, number | undefined, never>;
  event_id: Immutable<string>;
  stream_type: Immutable<string>;
  stream_id: Immutable<string>;
  stream_version: Immutable<number>;
  type: Immutable<string>;
  schema_version: Immutable<number>;
  data: Immutable<string>;
  meta: Immutable<string>;
  recorded_at: Immutable<string>;
  idempotency_key: Immutable<string | null>;
  /** SHA-256 over the previous event's hash and this event's content (see `hash-chain.ts`). */
  hash: Immutable<Buffer | null>;
}

export interface ProjectorCheckpointsTable {
  name: string;
  version: number;
  /** The last position applied; while `follows_head` is 1, the position at which it began to follow the head. */
  position: number;
  /** 1: every writer applies this projector inline, so it includes the whole log (migration 3). */
  follows_head: ColumnType<number, number | undefined, number>;
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
  projector_checkpoints: ProjectorCheckpointsTable;
  projection_documents: ProjectionDocumentsTable;
  schema_migrations: SchemaMigrationsTable;
}

/**
 * Kysely as a query builder only: queries are compiled to SQL and run synchronously by better-sqlite3,
 * so projectors can write inside the append transaction. The same builders target Postgres later.
 */
export function createQueryBuilder(): Kysely<StoreSchema> {
  return new Kysely<StoreSchema>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
}
