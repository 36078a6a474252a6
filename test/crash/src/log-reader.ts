import Database from 'better-sqlite3';
import { sleep } from './cli.js';

/** One event of the log as the tests read it. */
export interface LogRow {
  readonly position: number;
  readonly type: string;
  readonly streamId: string;
  readonly data: Record<string, unknown>;
}

interface RawRow {
  position: number;
  type: string;
  stream_id: string;
  data: string;
}

const row = (r: RawRow): LogRow => ({
  position: r.position,
  type: r.type,
  streamId: r.stream_id,
  data: JSON.parse(r.data) as Record<string, unknown>,
});

/**
 * Reads a home's store with a read-only SQLite connection, safe next to a serving host (WAL readers never
 * block the writer): the log, and projection documents as committed.
 */
export class LogReader {
  private db: Database.Database | undefined;

  constructor(readonly path: string) {}

  private open(): Database.Database {
    this.db ??= new Database(this.path, { readonly: true, fileMustExist: true });
    return this.db;
  }

  /** Events from `from` (a position), optionally of one type. */
  events(from = 1, type?: string): LogRow[] {
    const sql = `SELECT position, type, stream_id, data FROM events WHERE position >= ?${type ? ' AND type = ?' : ''} ORDER BY position`;
    const rows = this.open()
      .prepare<unknown[], RawRow>(sql)
      .all(...(type ? [from, type] : [from]));
    return rows.map(row);
  }

  /** The events of one stream, in order. */
  stream(streamId: string): LogRow[] {
    return this.open()
      .prepare<[string], RawRow>(
        'SELECT position, type, stream_id, data FROM events WHERE stream_id = ? ORDER BY stream_version',
      )
      .all(streamId)
      .map(row);
  }

  head(): number {
    return (
      this.open().prepare<[], { head: number | null }>('SELECT max(position) AS head FROM events').get()?.head ?? 0
    );
  }

  /** Every document of a projection collection. */
  docs<T>(projector: string, collection: string): T[] {
    return this.open()
      .prepare<[string, string], { doc: string }>(
        'SELECT doc FROM projection_documents WHERE projector = ? AND collection = ? ORDER BY id',
      )
      .all(projector, collection)
      .map((r) => JSON.parse(r.doc) as T);
  }

  doc<T>(projector: string, collection: string, id: string): T | undefined {
    const found = this.open()
      .prepare<[string, string, string], { doc: string }>(
        'SELECT doc FROM projection_documents WHERE projector = ? AND collection = ? AND id = ?',
      )
      .get(projector, collection, id);
    return found ? (JSON.parse(found.doc) as T) : undefined;
  }

  /** How many documents of a collection have `status` (every document when `status` is absent). */
  count(projector: string, collection: string, status?: string): number {
    const sql = `SELECT count(*) AS n FROM projection_documents WHERE projector = ? AND collection = ?${status ? " AND json_extract(doc, '$.status') = ?" : ''}`;
    const args = status ? [projector, collection, status] : [projector, collection];
    return (
      this.open()
        .prepare<unknown[], { n: number }>(sql)
        .get(...args)?.n ?? 0
    );
  }

  /** Polls the log from `from` until an event matches; fails naming `what` after `timeoutMs`. */
  async waitFor(what: string, match: (e: LogRow) => boolean, options: { from?: number; timeoutMs?: number } = {}) {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    let from = options.from ?? 1;
    for (;;) {
      for (const e of this.events(from)) {
        if (match(e)) return e;
        from = e.position + 1;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (log head ${this.head()})`);
      await sleep(20);
    }
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
  }
}
