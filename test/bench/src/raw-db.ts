import type { Synchronous } from '@demiurge/event-store-sqlite';
import { openSqliteEventStore } from '@demiurge/event-store-sqlite';
import Database from 'better-sqlite3';
import { benchRegistry } from './fixtures.js';

/** Creates the store's schema at `path` by opening a store without projectors and closing it. */
export async function createStoreSchema(path: string): Promise<void> {
  const store = await openSqliteEventStore({ path, registry: benchRegistry });
  await store.close();
}

/** A raw better-sqlite3 connection with the store's pragmas. */
export function openRaw(path: string, synchronous: Synchronous): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}

export const INSERT_EVENT = `INSERT INTO events (event_id, stream_type, stream_id, stream_version, type, schema_version, data,
  meta, recorded_at, idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** An insert of a whole chained row (the seeder's), with named parameters. */
export const INSERT_CHAINED_EVENT = `INSERT INTO events (position, event_id, stream_type, stream_id, stream_version, type,
  schema_version, data, meta, recorded_at, idempotency_key, hash) VALUES (@position, @event_id, @stream_type, @stream_id,
  @stream_version, @type, @schema_version, @data, @meta, @recorded_at, @idempotency_key, @hash)`;

export const GET_DOCUMENT = 'SELECT doc FROM projection_documents WHERE projector = ? AND collection = ? AND id = ?';

export const UPSERT_DOCUMENT = `INSERT INTO projection_documents (projector, collection, id, doc) VALUES (?, ?, ?, ?)
  ON CONFLICT (projector, collection, id) DO UPDATE SET doc = excluded.doc`;

/** The columns the store reads for an event. */
export const EVENT_COLUMNS =
  'position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta, recorded_at';
