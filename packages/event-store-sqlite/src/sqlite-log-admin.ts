import { domainEvents, type EventRegistry } from '@demiurge/contracts';
import {
  checkImportRecord,
  type LogAdmin,
  type LogHead,
  LogImportError,
  type StoredEventRecord,
  type StreamHeadInfo,
} from '@demiurge/event-store';
import type Database from 'better-sqlite3';
import { openDatabase } from './connection.js';
import { type ChainedRow, eventHash, GENESIS_HASH } from './hash-chain.js';

interface StoredRow extends ChainedRow {
  hash: Buffer | null;
}

const COLUMNS =
  'position, event_id, stream_type, stream_id, stream_version, type, schema_version, data, meta, recorded_at, idempotency_key, hash';

function toRecord(row: StoredRow): StoredEventRecord {
  return {
    position: row.position,
    eventId: row.event_id,
    streamType: row.stream_type,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    schemaVersion: row.schema_version,
    data: row.data,
    meta: row.meta,
    recordedAt: row.recorded_at,
    idempotencyKey: row.idempotency_key,
    hash: row.hash ? row.hash.toString('hex') : null,
  };
}

function toRow(record: StoredEventRecord): ChainedRow {
  return {
    position: record.position,
    event_id: record.eventId,
    stream_type: record.streamType,
    stream_id: record.streamId,
    stream_version: record.streamVersion,
    type: record.type,
    schema_version: record.schemaVersion,
    data: record.data,
    meta: record.meta,
    recorded_at: record.recordedAt,
    idempotency_key: record.idempotencyKey,
  };
}

/**
 * The {@link LogAdmin} of a SQLite store file, on a connection of its own (the file is created and migrated
 * when absent, as the store does). Imports run under `BEGIN IMMEDIATE`, so a store open on the same file
 * waits; open the store after the import so its projections catch up from the imported log.
 * @example
 * const admin = openSqliteLogAdmin('/home/me/.demiurge/runtime/runtime.sqlite3');
 * for await (const record of admin.records()) process.stdout.write(`${JSON.stringify(record)}\n`);
 */
export function openSqliteLogAdmin(path: string, options: { registry?: EventRegistry } = {}): LogAdmin {
  const registry = options.registry ?? domainEvents;
  const db: Database.Database = openDatabase(path);
  const headStmt = db.prepare<[], StoredRow>(`SELECT ${COLUMNS} FROM events ORDER BY position DESC LIMIT 1`);
  const page = db.prepare<[number, number], StoredRow>(
    `SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`,
  );
  const streamHead = db.prepare<[string], { stream_version: number; stream_type: string }>(
    'SELECT stream_version, stream_type FROM events WHERE stream_id = ? ORDER BY stream_version DESC LIMIT 1',
  );
  const insert = db.prepare(`INSERT INTO events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const head = (): { position: number; hash: Buffer } => {
    const row = headStmt.get();
    return row ? { position: row.position, hash: row.hash ?? GENESIS_HASH } : { position: 0, hash: GENESIS_HASH };
  };
  const importBatch = db.transaction((records: readonly StoredEventRecord[]): LogHead => {
    let chain = head();
    const streams = new Map<string, StreamHeadInfo>();
    for (const record of records) {
      let stream = streams.get(record.streamId);
      if (!stream) {
        const row = streamHead.get(record.streamId);
        if (row) stream = { version: row.stream_version, streamType: row.stream_type };
      }
      checkImportRecord(record, chain.position, stream, registry);
      const row = toRow(record);
      const hash = eventHash(chain.hash, row);
      if (record.hash !== null && record.hash !== hash.toString('hex')) {
        throw new LogImportError(record.position, 'its hash does not chain to the events before it');
      }
      try {
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
      } catch (err) {
        throw new LogImportError(record.position, (err as Error).message);
      }
      streams.set(record.streamId, { version: record.streamVersion, streamType: record.streamType });
      chain = { position: record.position, hash };
    }
    return { position: chain.position, hash: chain.hash.toString('hex') };
  });
  return {
    where: path,
    head: async () => {
      const { position, hash } = head();
      return { position, hash: hash.toString('hex') };
    },
    async *records(opts = {}) {
      const size = opts.batchSize ?? 1000;
      let after = 0;
      for (;;) {
        const rows = page.all(after, size);
        for (const row of rows) yield toRecord(row);
        if (rows.length < size) return;
        after = rows[rows.length - 1]!.position;
      }
    },
    importRecords: async (records) => importBatch.immediate(records),
    close: async () => {
      db.close();
    },
  };
}
