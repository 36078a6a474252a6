import Database from 'better-sqlite3';
import { sleep } from './cli.js';
import { SyncPg } from './pg-sync.js';
import { testStoreUrl } from './test-store.js';

/** One event of the log as the tests read it. */
export interface LogRow {
  readonly position: number;
  readonly type: string;
  readonly streamId: string;
  readonly data: Record<string, unknown>;
}

interface RawRow {
  position: number | string;
  type: string;
  stream_id: string;
  data: string;
}

const row = (r: RawRow): LogRow => ({
  position: Number(r.position),
  type: r.type,
  streamId: r.stream_id,
  data: JSON.parse(r.data) as Record<string, unknown>,
});

/** Where the reader's statements go: the SQLite file, or the PostgreSQL database of the test (`?` placeholders). */
interface Backend {
  all<T>(sql: string, params: readonly unknown[]): T[];
  /** The SQL that reads a text field of a JSON document column. */
  jsonField(column: string, field: string): string;
  close(): void;
}

function sqliteBackend(path: string): Backend {
  let db: Database.Database | undefined;
  return {
    all<T>(sql: string, params: readonly unknown[]) {
      db ??= new Database(path, { readonly: true, fileMustExist: true });
      return db.prepare<unknown[], T>(sql).all(...params);
    },
    jsonField: (column, field) => `json_extract(${column}, '$.${field}')`,
    close() {
      db?.close();
      db = undefined;
    },
  };
}

function postgresBackend(url: string): Backend {
  let pg: SyncPg | undefined;
  return {
    all<T>(sql: string, params: readonly unknown[]) {
      pg ??= new SyncPg(url);
      let n = 0;
      return pg.query<T>(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      );
    },
    jsonField: (column, field) => `(${column}::json ->> '${field}')`,
    close() {
      pg?.close();
      pg = undefined;
    },
  };
}

/**
 * Reads a home's store, safe next to a serving host: its SQLite file with a read-only connection (WAL readers
 * never block the writer), or, when the test runs on PostgreSQL ({@link testStoreUrl}), the test's database.
 * The log, and projection documents as committed.
 */
export class LogReader {
  private readonly backend: Backend;

  constructor(readonly path: string) {
    const url = testStoreUrl();
    this.backend = url ? postgresBackend(url) : sqliteBackend(path);
  }

  /** Events from `from` (a position), optionally of one type. */
  events(from = 1, type?: string): LogRow[] {
    const sql = `SELECT position, type, stream_id, data FROM events WHERE position >= ?${type ? ' AND type = ?' : ''} ORDER BY position`;
    return this.backend.all<RawRow>(sql, type ? [from, type] : [from]).map(row);
  }

  /** The events of one stream, in order. */
  stream(streamId: string): LogRow[] {
    return this.backend
      .all<RawRow>('SELECT position, type, stream_id, data FROM events WHERE stream_id = ? ORDER BY stream_version', [
        streamId,
      ])
      .map(row);
  }

  head(): number {
    return Number(
      this.backend.all<{ head: number | null }>('SELECT max(position) AS head FROM events', [])[0]?.head ?? 0,
    );
  }

  /** The stored meta of the event at `position`. */
  meta(position: number): Record<string, unknown> {
    const found = this.backend.all<{ meta: string }>('SELECT meta FROM events WHERE position = ?', [position])[0];
    if (!found) throw new Error(`no event at position ${position}`);
    return JSON.parse(found.meta) as Record<string, unknown>;
  }

  /** Every document of a projection collection. */
  docs<T>(projector: string, collection: string): T[] {
    return this.backend
      .all<{ doc: string }>('SELECT doc FROM projection_documents WHERE projector = ? AND collection = ? ORDER BY id', [
        projector,
        collection,
      ])
      .map((r) => JSON.parse(r.doc) as T);
  }

  doc<T>(projector: string, collection: string, id: string): T | undefined {
    const [found] = this.backend.all<{ doc: string }>(
      'SELECT doc FROM projection_documents WHERE projector = ? AND collection = ? AND id = ?',
      [projector, collection, id],
    );
    return found ? (JSON.parse(found.doc) as T) : undefined;
  }

  /** How many documents of a collection have `status` (every document when `status` is absent). */
  count(projector: string, collection: string, status?: string): number {
    const sql = `SELECT count(*) AS n FROM projection_documents WHERE projector = ? AND collection = ?${status ? ` AND ${this.backend.jsonField('doc', 'status')} = ?` : ''}`;
    const args = status ? [projector, collection, status] : [projector, collection];
    return Number(this.backend.all<{ n: number | string }>(sql, args)[0]?.n ?? 0);
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
    this.backend.close();
  }
}
