import type { EventMeta, EventRegistry, RecordedEvent } from '@demiurge/contracts';
import type { EventRow } from '@demiurge/event-store/adapter';
import type Database from 'better-sqlite3';
import type { ChainedRow } from './hash-chain.js';

export type { EventRow };

/** Turns a row into a recorded event, upcasting and validating its data. */
export function decodeRow(registry: EventRegistry, row: EventRow): RecordedEvent {
  return {
    position: row.position,
    eventId: row.event_id,
    streamType: row.stream_type,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    schemaVersion: registry.get(row.type).schemaVersion,
    data: registry.read(row.type, row.schema_version, JSON.parse(row.data)),
    meta: JSON.parse(row.meta) as EventMeta,
    recordedAt: row.recorded_at,
  };
}

const COLUMNS =
  'position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta, recorded_at';

/** The INSERT of one chained event row: every column, the hash last (see {@link insertEventRow}). */
export const INSERT_EVENT_SQL = `INSERT INTO events (${COLUMNS}, idempotency_key, hash)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Runs {@link INSERT_EVENT_SQL} for a row and its hash: the one place a row's columns are bound in order. */
export function insertEventRow(insert: Database.Statement, row: ChainedRow, hash: Buffer): void {
  insert.run(
    row.position,
    row.event_id,
    row.stream_type,
    row.stream_id,
    row.stream_version,
    row.type,
    row.schema_version,
    row.data,
    row.meta,
    row.recorded_at,
    row.idempotency_key,
    hash,
  );
}

/** A `projector_checkpoints` row as stored. */
export interface CheckpointRow {
  readonly name: string;
  readonly version: number;
  readonly position: number;
  /** 1: it includes the whole log, whatever the head (see ProjectorRunner.followHead). */
  readonly follows_head: number;
}

/** The position a checkpoint row's documents include: the head for one that follows it, else its own. */
export function includedPosition(row: { position: number; follows_head?: number }, head: number): number {
  return row.follows_head === 1 ? head : row.position;
}

/** The statements of the append and publish paths, prepared once per connection. */
export class LogStatements {
  readonly begin: Database.Statement;
  readonly commit: Database.Statement;
  readonly rollback: Database.Statement;
  readonly savepoint: Database.Statement;
  readonly release: Database.Statement;
  readonly rollbackTo: Database.Statement;
  readonly insert: Database.Statement;
  readonly chainHead: Database.Statement<[], { position: number; hash: Buffer | null }>;
  readonly chainRows: Database.Statement<[number, number], ChainedRow & { hash: Buffer | null }>;
  readonly streamHead: Database.Statement<[string], { stream_version: number; stream_type: string }>;
  readonly head: Database.Statement<[], number>;
  readonly dataVersion: Database.Statement<[], number>;
  readonly keyPosition: Database.Statement<[string], number>;
  readonly keyEvents: Database.Statement<[string, string, string], EventRow>;
  readonly after: Database.Statement<[number, number, number], EventRow>;
  readonly stream: Database.Statement<[string, number], EventRow>;
  readonly setCheckpoint: Database.Statement<[number, string]>;
  readonly upsertCheckpoint: Database.Statement<[string, number, number]>;
  /** Sets whether a checkpoint follows the head (1) or stands at the position given (0). */
  readonly setFollowsHead: Database.Statement<[number, number, string]>;
  readonly checkpoints: Database.Statement<[], CheckpointRow>;

  constructor(db: Database.Database) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.savepoint = db.prepare('SAVEPOINT demiurge_append');
    this.release = db.prepare('RELEASE demiurge_append');
    this.rollbackTo = db.prepare('ROLLBACK TO demiurge_append');
    this.insert = db.prepare(INSERT_EVENT_SQL);
    this.chainHead = db.prepare('SELECT position, hash FROM events ORDER BY position DESC LIMIT 1');
    this.chainRows = db.prepare(
      `SELECT ${COLUMNS}, idempotency_key, hash FROM events WHERE position > ? ORDER BY position LIMIT ?`,
    );
    this.streamHead = db.prepare(
      'SELECT stream_version, stream_type FROM events WHERE stream_id = ? ORDER BY stream_version DESC LIMIT 1',
    );
    this.head = db.prepare('SELECT COALESCE(MAX(position), 0) FROM events').pluck() as Database.Statement<[], number>;
    this.dataVersion = db.prepare('PRAGMA data_version').pluck() as Database.Statement<[], number>;
    this.keyPosition = db
      .prepare('SELECT position FROM events WHERE idempotency_key = ?')
      .pluck() as Database.Statement<[string], number>;
    this.keyEvents = db.prepare(
      `SELECT ${COLUMNS} FROM events WHERE idempotency_key = ? OR (idempotency_key > ? AND idempotency_key < ?)
       ORDER BY position`,
    );
    this.after = db.prepare(
      `SELECT ${COLUMNS} FROM events WHERE position > ? AND position <= ? ORDER BY position LIMIT ?`,
    );
    this.stream = db.prepare(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND stream_version >= ? ORDER BY stream_version`,
    );
    this.setCheckpoint = db.prepare('UPDATE projector_checkpoints SET position = ?, follows_head = 0 WHERE name = ?');
    this.upsertCheckpoint = db.prepare(
      `INSERT INTO projector_checkpoints (name, version, position, follows_head) VALUES (?, ?, ?, 0)
       ON CONFLICT (name) DO UPDATE SET version = excluded.version, position = excluded.position, follows_head = 0`,
    );
    this.setFollowsHead = db.prepare('UPDATE projector_checkpoints SET follows_head = ?, position = ? WHERE name = ?');
    this.checkpoints = db.prepare('SELECT name, version, position, follows_head FROM projector_checkpoints');
  }
}

export const EVENT_COLUMNS = COLUMNS;
