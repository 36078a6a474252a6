import { CorruptDatabaseError, DatabaseNewerThanCodeError } from '@demiurge/event-store';
import { type Kysely, sql } from 'kysely';
import type { StoreSchema } from './schema.js';

/** One schema step, run in a transaction. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  up(db: Kysely<StoreSchema>): Promise<void>;
}

/** Any key of the whole-cluster advisory lock space; the migrating session holds it, so two hosts never race. */
const MIGRATION_LOCK = 0x64656d69; // "demi"

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: '001_event_log',
    async up(db) {
      // Ids and keys compare byte by byte (COLLATE "C"), as in SQLite: list order and key ranges agree.
      await sql`CREATE TABLE events (
        position bigint PRIMARY KEY,
        event_id text COLLATE "C" NOT NULL UNIQUE,
        stream_type text NOT NULL,
        stream_id text COLLATE "C" NOT NULL,
        stream_version integer NOT NULL,
        type text COLLATE "C" NOT NULL,
        schema_version integer NOT NULL,
        data text NOT NULL,
        meta text NOT NULL,
        recorded_at text NOT NULL,
        idempotency_key text COLLATE "C",
        hash bytea,
        CONSTRAINT events_stream_version UNIQUE (stream_id, stream_version)
      )`.execute(db);
      await sql`CREATE INDEX events_type_position ON events (type, position)`.execute(db);
      await sql`CREATE UNIQUE INDEX events_idempotency_key ON events (idempotency_key)
        WHERE idempotency_key IS NOT NULL`.execute(db);
      await sql`CREATE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'events is append-only: % is refused', TG_OP USING ERRCODE = 'restrict_violation'; END $$`.execute(
        db,
      );
      await sql`CREATE TRIGGER events_refuse_update_delete BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION events_refuse_change()`.execute(db);
      await sql`CREATE TRIGGER events_refuse_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION events_refuse_change()`.execute(db);
      await sql`CREATE TABLE log_head (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        position bigint NOT NULL,
        hash bytea NOT NULL
      )`.execute(db);
      await sql`INSERT INTO log_head (id, position, hash) VALUES (true, 0, ${Buffer.alloc(32)})`.execute(db);
      await sql`CREATE TABLE projector_checkpoints (
        name text COLLATE "C" PRIMARY KEY,
        version integer NOT NULL,
        position bigint NOT NULL
      )`.execute(db);
      await sql`CREATE TABLE projection_documents (
        projector text COLLATE "C" NOT NULL,
        collection text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        doc text NOT NULL,
        PRIMARY KEY (projector, collection, id)
      )`.execute(db);
    },
  },
];

/** The schema version this code writes; a database with a higher one is refused. */
export const SCHEMA_VERSION = migrations[migrations.length - 1]!.version;

/**
 * Brings the schema up to {@link SCHEMA_VERSION} under a transaction-scoped advisory lock (hosts starting
 * together migrate once), or refuses a database written by newer code, changing nothing.
 */
export async function migrate(db: Kysely<StoreSchema>, where: string, now: () => string): Promise<number> {
  return db.transaction().execute(async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(tx);
    await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`.execute(tx);
    const row = await tx
      .selectFrom('schema_migrations')
      .select((eb) => eb.fn.max('version').as('version'))
      .executeTakeFirst();
    const current = Number(row?.version ?? 0);
    if (current > SCHEMA_VERSION) throw new DatabaseNewerThanCodeError(where, current, SCHEMA_VERSION);
    if (current === 0) {
      const { rows } = await sql<{
        taken: string | null;
      }>`SELECT coalesce(to_regclass('events'), to_regclass('log_head'),
        to_regclass('projection_documents'))::text AS taken`.execute(tx);
      if (rows[0]?.taken) {
        throw new CorruptDatabaseError(
          where,
          `it has a table "${rows[0].taken}" that Demiurge did not create; use an empty database`,
        );
      }
    }
    for (const m of migrations) {
      if (m.version <= current) continue;
      await m.up(tx);
      await tx
        .insertInto('schema_migrations')
        .values({ version: m.version, name: m.name, applied_at: now() })
        .execute();
    }
    return SCHEMA_VERSION;
  });
}
