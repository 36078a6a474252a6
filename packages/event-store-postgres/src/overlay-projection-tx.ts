import type { ListOptions, ProjectionTx } from '@demiurge/event-store';

/** A read the overlay could not answer from what it has loaded: the runner loads it and applies the event again. */
export class OverlayMiss {
  constructor(
    readonly collection: string,
    /** A document id, or undefined for a whole collection (a `list`). */
    readonly id: string | undefined,
  ) {}
}

/** Writes of one layer: documents (JSON text, or null for deleted) and the collections it cleared. */
class Layer {
  readonly docs = new Map<string, Map<string, string | null>>();
  clearedAll = false;
  readonly cleared = new Set<string>();

  /** The layer's answer for a document: its text, null when deleted or cleared here, undefined when it does not know. */
  lookup(collection: string, id: string): string | null | undefined {
    const doc = this.docs.get(collection)?.get(id);
    if (doc !== undefined) return doc;
    return this.clearedAll || this.cleared.has(collection) ? null : undefined;
  }

  set(collection: string, id: string, doc: string | null): void {
    const docs = this.docs.get(collection) ?? new Map<string, string | null>();
    this.docs.set(collection, docs);
    docs.set(id, doc);
  }

  clear(collection: string | undefined): void {
    if (collection === undefined) {
      this.docs.clear();
      this.clearedAll = true;
      this.cleared.clear();
    } else {
      this.docs.delete(collection);
      this.cleared.add(collection);
    }
  }

  /** Puts `top`'s writes over this layer's. */
  absorb(top: Layer): void {
    if (top.clearedAll) this.clear(undefined);
    for (const c of top.cleared) this.clear(c);
    for (const [c, docs] of top.docs) for (const [id, doc] of docs) this.set(c, id, doc);
  }

  get empty(): boolean {
    return this.docs.size === 0 && !this.clearedAll && this.cleared.size === 0;
  }
}

/**
 * The synchronous {@link ProjectionTx} of one projector inside a PostgreSQL append transaction. It answers
 * reads from documents already loaded from the database (in this transaction, under the log-head lock) and
 * from its own writes; a read it cannot answer throws {@link OverlayMiss}, which the runner catches: it loads
 * the document (or collection), drops the event's partial writes and applies the event again. Projectors are
 * deterministic functions of (event, documents), so the second run is the run. The writes reach the database
 * in the same transaction as the events, before the commit.
 */
export class OverlayProjectionTx implements ProjectionTx {
  /** Documents as loaded from the database: text, or null for known-absent. */
  private readonly base = new Map<string, Map<string, string | null>>();
  private readonly loadedCollections = new Set<string>();
  /** Writes of the events applied so far in this transaction. */
  readonly written = new Layer();
  /** Writes of the event being applied: kept on success, dropped on a miss. */
  private staged = new Layer();

  constructor(
    readonly projector: string,
    /** Documents known without a load (the store's {@link DocumentCache}): text, null for absent, undefined if unknown. */
    private readonly known?: (collection: string, id: string) => string | null | undefined,
  ) {}

  get<T = unknown>(collection: string, id: string): T | undefined {
    const doc = this.read(collection, id);
    return doc === null ? undefined : (JSON.parse(doc) as T);
  }

  put(collection: string, id: string, doc: unknown): void {
    const text = JSON.stringify(doc);
    if (text === undefined)
      throw new Error(`projector ${this.projector} put an undefined document at ${collection}/${id}`);
    this.staged.set(collection, id, text);
  }

  delete(collection: string, id: string): void {
    this.staged.set(collection, id, null);
  }

  list<T = unknown>(collection: string, options?: ListOptions): T[] {
    const cleared =
      this.staged.clearedAll ||
      this.staged.cleared.has(collection) ||
      this.written.clearedAll ||
      this.written.cleared.has(collection);
    if (!cleared && !this.loadedCollections.has(collection)) throw new OverlayMiss(collection, undefined);
    const ids = new Set<string>();
    if (!cleared) for (const id of this.base.get(collection)?.keys() ?? []) ids.add(id);
    for (const id of this.written.docs.get(collection)?.keys() ?? []) ids.add(id);
    for (const id of this.staged.docs.get(collection)?.keys() ?? []) ids.add(id);
    const out: T[] = [];
    for (const id of [...ids].sort(compareIds)) {
      if (options?.after !== undefined && compareIds(id, options.after) <= 0) continue;
      if (options?.prefix !== undefined && !id.startsWith(options.prefix)) continue;
      const doc = this.read(collection, id);
      if (doc === null) continue;
      out.push(JSON.parse(doc) as T);
      if (options?.limit !== undefined && out.length >= options.limit) break;
    }
    return out;
  }

  clear(collection?: string): void {
    this.staged.clear(collection);
  }

  /** Starts applying one event. */
  begin(): void {
    this.staged = new Layer();
  }

  /** The event applied: its writes join the transaction's. */
  keep(): void {
    this.written.absorb(this.staged);
    this.staged = new Layer();
  }

  /** Records a document loaded from the database (null when absent). */
  loaded(collection: string, id: string, doc: string | null): void {
    const docs = this.base.get(collection) ?? new Map<string, string | null>();
    this.base.set(collection, docs);
    docs.set(id, doc);
  }

  /** Records a whole collection loaded from the database. */
  loadedCollection(collection: string, rows: Iterable<{ id: string; doc: string }>): void {
    const docs = new Map<string, string | null>();
    for (const row of rows) docs.set(row.id, row.doc);
    this.base.set(collection, docs);
    this.loadedCollections.add(collection);
  }

  get dirty(): boolean {
    return !this.written.empty;
  }

  /**
   * Every document this transaction loaded or wrote, as it stands once the writes are committed; undefined
   * when the projector cleared collections (what a clear removed is not listed).
   */
  documents(): [collection: string, id: string, doc: string | null][] | undefined {
    if (this.written.clearedAll || this.written.cleared.size > 0) return undefined;
    const out: [string, string, string | null][] = [];
    for (const [collection, docs] of this.base) {
      const written = this.written.docs.get(collection);
      for (const [id, doc] of docs) if (!written?.has(id)) out.push([collection, id, doc]);
    }
    for (const [collection, docs] of this.written.docs) for (const [id, doc] of docs) out.push([collection, id, doc]);
    return out;
  }

  private read(collection: string, id: string): string | null {
    const staged = this.staged.lookup(collection, id);
    if (staged !== undefined) return staged;
    const written = this.written.lookup(collection, id);
    if (written !== undefined) return written;
    const base = this.base.get(collection);
    if (base?.has(id)) return base.get(id)!;
    if (this.loadedCollections.has(collection)) return null;
    const known = this.known?.(collection, id);
    if (known !== undefined) {
      this.loaded(collection, id, known);
      return known;
    }
    throw new OverlayMiss(collection, id);
  }
}

/** Byte order of UTF-8, as `COLLATE "C"` and SQLite's BINARY order ids. */
export function compareIds(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
