import type { ListOptions, ProjectionTx } from '@demiurge/event-store';
import { encodeDocument } from '@demiurge/event-store/adapter';
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DocumentOverlay } from './document-overlay.js';
import type { StoreSchema } from './schema.js';
import type { SqlRunner } from './sql-runner.js';

/** Hot statements for one projector's documents, prepared once. */
export class DocumentStatements {
  readonly get: Database.Statement<[string, string, string], { doc: string }>;
  readonly put: Database.Statement<[string, string, string, string]>;
  readonly delete: Database.Statement<[string, string, string]>;

  constructor(db: Database.Database) {
    this.get = db.prepare('SELECT doc FROM projection_documents WHERE projector = ? AND collection = ? AND id = ?');
    this.put = db.prepare(
      `INSERT INTO projection_documents (projector, collection, id, doc) VALUES (?, ?, ?, ?)
       ON CONFLICT (projector, collection, id) DO UPDATE SET doc = excluded.doc`,
    );
    this.delete = db.prepare('DELETE FROM projection_documents WHERE projector = ? AND collection = ? AND id = ?');
  }
}

/**
 * The SQLite {@link ProjectionTx}: one projector's documents in `projection_documents`, written inside
 * the caller's transaction (so a rollback undoes them with the events). In a group commit, writes are held
 * in the batch's {@link DocumentOverlay} and reach SQLite once, before the commit.
 */
export class SqliteProjectionTx implements ProjectionTx {
  constructor(
    private readonly projector: string,
    private readonly hot: DocumentStatements,
    private readonly runner: SqlRunner,
    private readonly qb: Kysely<StoreSchema>,
    private readonly overlay: DocumentOverlay,
  ) {}

  get<T>(collection: string, id: string): T | undefined {
    const held = this.overlay.isActive ? this.overlay.read(this.projector, collection, id) : undefined;
    if (held !== undefined) return held === null ? undefined : (JSON.parse(held) as T);
    const row = this.hot.get.get(this.projector, collection, id);
    return row ? (JSON.parse(row.doc) as T) : undefined;
  }

  put(collection: string, id: string, doc: unknown): void {
    const encoded = encodeDocument(collection, id, doc);
    if (this.overlay.isActive) this.overlay.write(this.projector, collection, id, encoded);
    else this.hot.put.run(this.projector, collection, id, encoded);
  }

  delete(collection: string, id: string): void {
    if (this.overlay.isActive) this.overlay.write(this.projector, collection, id, null);
    else this.hot.delete.run(this.projector, collection, id);
  }

  list<T>(collection: string, options?: ListOptions): T[] {
    if (this.overlay.isActive) this.overlay.flush();
    return listDocuments(this.runner, this.projector, collection, options).map((row) => JSON.parse(row.doc) as T);
  }

  clear(collection?: string): void {
    if (this.overlay.isActive) this.overlay.flush();
    let query = this.qb.deleteFrom('projection_documents').where('projector', '=', this.projector);
    if (collection !== undefined) query = query.where('collection', '=', collection);
    this.runner.run(query);
  }
}

/**
 * Lists a projector's documents in (collection, id) order. The SQL has a fixed shape per combination of
 * options, so its statement is prepared once per shape and found again by a number, not by its text (this runs
 * on every claim).
 */
export function listDocuments(
  runner: SqlRunner,
  projector: string,
  collection: string | undefined,
  options?: ListOptions,
): { collection: string; id: string; doc: string }[] {
  const params: unknown[] = [projector];
  let shape = 0;
  if (collection !== undefined) {
    shape |= 1;
    params.push(collection);
  }
  if (options?.after !== undefined) {
    shape |= 2;
    params.push(options.after);
  }
  if (options?.prefix !== undefined) {
    shape |= 4;
    params.push(options.prefix, `${options.prefix}\uffff`);
  }
  const limit = options?.limit;
  // A literal, not a parameter: SQLite prepares a statement with a bound LIMIT again at every run (about
  // 40 µs, most of a list's cost). Rounded up to a power of two, so that a few statements serve every limit.
  const literal =
    limit !== undefined && Number.isSafeInteger(limit) && limit >= 0 && limit <= MAX_LITERAL_LIMIT
      ? literalLimit(limit)
      : undefined;
  if (limit !== undefined && literal === undefined) {
    shape |= 8;
    params.push(limit);
  }
  const key = shape * (MAX_LITERAL_LIMIT + 2) + (literal === undefined ? 0 : literal + 1);
  let byShape = listStatements.get(runner);
  if (byShape === undefined) {
    byShape = new Map();
    listStatements.set(runner, byShape);
  }
  let statement = byShape.get(key);
  if (statement === undefined) {
    statement = runner.statement(listSql(shape, literal));
    byShape.set(key, statement);
  }
  const rows = statement.all(...params) as { collection: string; id: string; doc: string }[];
  return limit !== undefined && rows.length > limit ? rows.slice(0, limit) : rows;
}

/** Each runner's list statements by shape (which options are given, and the literal limit). */
const listStatements = new WeakMap<SqlRunner, Map<number, Database.Statement>>();

/** The list SQL of a shape (bits: collection 1, after 2, prefix 4, bound limit 8) and literal limit. */
function listSql(shape: number, literal: number | undefined): string {
  let sql = 'SELECT collection, id, doc FROM projection_documents WHERE projector = ?';
  if (shape & 1) sql += ' AND collection = ?';
  if (shape & 2) sql += ' AND id > ?';
  // A range, not LIKE: ids may hold % and _, and a range uses the primary key.
  if (shape & 4) sql += ' AND id >= ? AND id < ?';
  sql += ' ORDER BY collection, id';
  if (literal !== undefined) sql += ` LIMIT ${literal}`;
  else if (shape & 8) sql += ' LIMIT ?';
  return sql;
}

/** Limits up to this are written into the SQL text (as one of a few powers of two); larger ones are bound. */
const MAX_LITERAL_LIMIT = 4096;

/** The smallest power of two at least `limit` (0 stays 0). */
function literalLimit(limit: number): number {
  return limit === 0 ? 0 : 2 ** Math.ceil(Math.log2(limit));
}
