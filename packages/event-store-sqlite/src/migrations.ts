import type Database from 'better-sqlite3';
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { type ChainedRow, eventHash, GENESIS_HASH } from './hash-chain.js';
import type { StoreSchema } from './schema.js';

/**
 * One schema step; `up` returns the statements, compiled by Kysely's schema builder. `backfill`, when there is
 * one, then rewrites existing rows (in the same transaction as the statements).
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  up(db: Kysely<StoreSchema>): CompiledQuery[];
  backfill?(db: Database.Database): void;
}

// biome-ignore lint/suspicious/noExplicitAny: migrations create tables the typed schema does not know yet
type AnyDb = Kysely<any>;

const REFUSE_UPDATE = `CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
            BEGIN SELECT RAISE(ABORT, 'events is append-only: UPDATE is refused'); END`;

/** Chains the existing events in position order: the only UPDATE of `events` ever made, in the migration. */
function backfillHashes(db: Database.Database): void {
  db.exec('DROP TRIGGER events_refuse_update');
  const read = db.prepare(
    `SELECT position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta,
       recorded_at, idempotency_key FROM events WHERE position > ? ORDER BY position LIMIT 5000`,
  );
  const write = db.prepare('UPDATE events SET hash = ? WHERE position = ?');
  let previous = GENESIS_HASH;
  let after = 0;
  for (;;) {
    const rows = read.all(after) as ChainedRow[];
    for (const row of rows) {
      previous = eventHash(previous, row);
      write.run(previous, row.position);
      after = row.position;
    }
    if (rows.length < 5000) break;
  }
  db.exec(REFUSE_UPDATE);
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: '001_event_log',
    up: (typed) => {
      const db = typed as AnyDb;
      return [
        db.schema
          .createTable('events')
          .addColumn('position', 'integer', (c) => c.primaryKey())
          .addColumn('event_id', 'text', (c) => c.notNull().unique())
          .addColumn('stream_type', 'text', (c) => c.notNull())
          .addColumn('stream_id', 'text', (c) => c.notNull())
          .addColumn('stream_version', 'integer', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('schema_version', 'integer', (c) => c.notNull())
          .addColumn('data', 'text', (c) => c.notNull())
          .addColumn('meta', 'text', (c) => c.notNull())
          .addColumn('recorded_at', 'text', (c) => c.notNull())
          .addColumn('idempotency_key', 'text')
          .addUniqueConstraint('events_stream_version', ['stream_id', 'stream_version'])
          .compile(),
        db.schema.createIndex('events_type_position').on('events').columns(['type', 'position']).compile(),
        // Partial: most events carry no idempotency key, and an index entry per NULL is a write for nothing.
        db.schema
          .createIndex('events_idempotency_key')
          .on('events')
          .column('idempotency_key')
          .unique()
          .where(sql.ref('idempotency_key'), 'is not', null)
          .compile(),
        sql.raw(REFUSE_UPDATE).compile(db),
        sql`CREATE TRIGGER events_refuse_delete BEFORE DELETE ON events
            BEGIN SELECT RAISE(ABORT, 'events is append-only: DELETE is refused'); END`.compile(db),
        db.schema
          .createTable('projector_checkpoints')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('position', 'integer', (c) => c.notNull())
          .compile(),
        db.schema
          .createTable('projection_documents')
          .addColumn('projector', 'text', (c) => c.notNull())
          .addColumn('collection', 'text', (c) => c.notNull())
          .addColumn('id', 'text', (c) => c.notNull())
          .addColumn('doc', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('projection_documents_pk', ['projector', 'collection', 'id'])
          .modifyEnd(sql`without rowid`)
          .compile(),
      ];
    },
  },
  {
    version: 2,
    name: '002_event_hash_chain',
    up: (typed) => [(typed as AnyDb).schema.alterTable('events').addColumn('hash', 'blob').compile()],
    backfill: backfillHashes,
  },
  {
    // An inline projector's checkpoint no longer moves at every commit: `follows_head` = 1 says its documents
    // include every event of the log, whatever the head (see ProjectorRunner.followHead). A writer that does not
    // apply it turns it back into a position before its first append. Code before this migration read only
    // `position`: it refuses this schema version instead of catching such a projector up twice.
    version: 3,
    name: '003_checkpoints_follow_head',
    up: (typed) => [
      (typed as AnyDb).schema
        .alterTable('projector_checkpoints')
        .addColumn('follows_head', 'integer', (c) => c.notNull().defaultTo(0))
        .compile(),
    ],
  },
];

/** The schema version this code writes; a database with a higher one is refused. */
export const SCHEMA_VERSION = migrations[migrations.length - 1]!.version;
