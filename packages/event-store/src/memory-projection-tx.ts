import type { ListOptions, ProjectionTx } from './projector.js';

/** A projector's documents: collection -> id -> JSON text. */
export type DocumentMap = Map<string, Map<string, string>>;

/** Serializes a document, refusing values JSON cannot carry. */
export function encodeDocument(collection: string, id: string, doc: unknown): string {
  const text = doc === undefined ? undefined : JSON.stringify(doc);
  if (text === undefined) throw new TypeError(`document ${collection}/${id} is not a JSON value`);
  return text;
}

/** Sorts, filters and pages ids the way every backend lists documents. */
export function selectIds(ids: Iterable<string>, options: ListOptions | undefined): string[] {
  const out: string[] = [];
  for (const id of ids) {
    if (options?.after !== undefined && !(id > options.after)) continue;
    if (options?.prefix !== undefined && !id.startsWith(options.prefix)) continue;
    out.push(id);
  }
  out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return options?.limit === undefined ? out : out.slice(0, options.limit);
}

/**
 * The in-memory {@link ProjectionTx}: writes go to an overlay that is merged into the base on commit
 * and dropped on rollback.
 */
export class MemoryProjectionTx implements ProjectionTx {
  private readonly writes = new Map<string, Map<string, string | null>>();

  constructor(private readonly base: DocumentMap) {}

  get<T>(collection: string, id: string): T | undefined {
    const pending = this.writes.get(collection)?.get(id);
    const text = pending === undefined ? this.base.get(collection)?.get(id) : pending;
    return text == null ? undefined : (JSON.parse(text) as T);
  }

  put(collection: string, id: string, doc: unknown): void {
    this.overlay(collection).set(id, encodeDocument(collection, id, doc));
  }

  delete(collection: string, id: string): void {
    this.overlay(collection).set(id, null);
  }

  list<T>(collection: string, options?: ListOptions): T[] {
    const ids = new Set<string>(this.base.get(collection)?.keys() ?? []);
    for (const [id, text] of this.writes.get(collection) ?? []) {
      if (text === null) ids.delete(id);
      else ids.add(id);
    }
    return selectIds(ids, options).map((id) => this.get<T>(collection, id) as T);
  }

  clear(collection?: string): void {
    const names = collection === undefined ? new Set([...this.base.keys(), ...this.writes.keys()]) : [collection];
    for (const name of names) {
      const overlay = this.overlay(name);
      for (const id of this.base.get(name)?.keys() ?? []) overlay.set(id, null);
      for (const id of overlay.keys()) overlay.set(id, null);
    }
  }

  /** Merges the overlay into the base. */
  commit(): void {
    for (const [collection, writes] of this.writes) {
      let docs = this.base.get(collection);
      for (const [id, text] of writes) {
        if (text === null) {
          docs?.delete(id);
        } else {
          if (!docs) {
            docs = new Map();
            this.base.set(collection, docs);
          }
          docs.set(id, text);
        }
      }
      if (docs?.size === 0) this.base.delete(collection);
    }
    this.writes.clear();
  }

  private overlay(collection: string): Map<string, string | null> {
    let overlay = this.writes.get(collection);
    if (!overlay) {
      overlay = new Map();
      this.writes.set(collection, overlay);
    }
    return overlay;
  }
}
