import { domainEvents, type EventRegistry } from '@demiurge/contracts';
import {
  type LogAdmin,
  type LogHead,
  LogImportError,
  type StoredEventRecord,
  type StreamHeadInfo,
} from '@demiurge/event-store';
import {
  chainImportRecord,
  STORED_EVENT_COLUMNS,
  type StoredEventRow,
  storedRecordOf,
} from '@demiurge/event-store/adapter';
import type Database from 'better-sqlite3';
import { openDatabase } from './connection.js';
import { INSERT_EVENT_SQL, insertEventRow } from './event-rows.js';
import { GENESIS_HASH } from './hash-chain.js';

const COLUMNS = STORED_EVENT_COLUMNS;
type StoredRow = StoredEventRow;

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
  const insert = db.prepare(INSERT_EVENT_SQL);
  // A projector that follows the head includes every event because every writer applies it; an import applies
  // none, so each one following stops at the head before the import, and the next store to open catches it up.
  const stopFollowers = db.prepare(
    'UPDATE projector_checkpoints SET follows_head = 0, position = ? WHERE follows_head = 1',
  );
  const head = (): { position: number; hash: Buffer } => {
    const row = headStmt.get();
    return row ? { position: row.position, hash: row.hash ?? GENESIS_HASH } : { position: 0, hash: GENESIS_HASH };
  };
  const importBatch = db.transaction((records: readonly StoredEventRecord[]): LogHead => {
    let chain = head();
    stopFollowers.run(chain.position);
    const streams = new Map<string, StreamHeadInfo>();
    for (const record of records) {
      let stream = streams.get(record.streamId);
      if (!stream) {
        const row = streamHead.get(record.streamId);
        if (row) stream = { version: row.stream_version, streamType: row.stream_type };
      }
      const { row, hash } = chainImportRecord(record, chain, stream, registry);
      try {
        insertEventRow(insert, row, hash);
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
        for (const row of rows) yield storedRecordOf(row);
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
