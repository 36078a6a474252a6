/** Where the cached documents were true: the head this store's last commit left and that commit's transaction id. */
export interface CacheStamp {
  readonly position: number;
  /** The committing transaction's id (`xid` as text): the `xmin` it left on the head row. */
  readonly xid: string;
  /** The hash of the event at `position` (the chain's head), when the commit knows it. */
  readonly hash?: Buffer;
}

/** A stream's head as a commit left it: its type and last version. */
export interface StreamHead {
  readonly type: string;
  readonly version: number;
}

/** A document's committed text, or null for known-absent. */
export type CachedDocument = string | null;

const keyOf = (projector: string, collection: string, id: string) => `${projector}\u0000${collection}\u0000${id}`;

/**
 * Projection documents as this store's last commit left them, so that the next append's projectors find the
 * documents they read in memory (counters, the item a claim just wrote) instead of loading them in a round trip
 * under the log-head lock.
 *
 * It is used only when nothing else can have written a document since: every write of projection documents
 * happens under the log-head lock and updates the head row (an append moves the head; a reset or a catch-up
 * touches it, see `lockHead`), and PostgreSQL stamps the updated row with the writing transaction's id
 * (`xmin`). So, read under the lock: when the head is still at the position this store's last commit left and
 * the row still carries that commit's transaction id, no other transaction (of any host) has written a
 * document since, and the cache is the database's state. Anything else (another host appended, rebuilt, reset;
 * this store rebuilt; a commit of
 * this store that failed) empties it. At most `max` documents, the least recently used dropped first.
 */
export class DocumentCache {
  private readonly docs = new Map<string, CachedDocument>();
  /** The heads of the streams this store's commits since the stamp chain began wrote or read under the lock. */
  private readonly heads = new Map<string, StreamHead>();
  private stamp: CacheStamp | undefined;

  constructor(readonly max = 5000) {}

  /**
   * Whether the cache is the database's state for a transaction that locked the head at `position` and found
   * `writer` as the head row's last writer. When it is not, it is emptied.
   */
  validate(position: number, writer: string): boolean {
    const stamp = this.stamp;
    const valid = stamp !== undefined && stamp.position === position && stamp.xid === writer;
    if (!valid) this.clear();
    return valid;
  }

  /** The stamp the cache is true at (undefined when empty). */
  get current(): CacheStamp | undefined {
    return this.stamp;
  }

  /** A stream's head as of the stamp, when a commit of this store since the cache began learnt it. */
  streamHead(streamId: string): StreamHead | undefined {
    return this.stamp === undefined ? undefined : this.heads.get(streamId);
  }

  /**
   * The cached document (text, or null for known-absent); undefined when the cache does not know it. A document
   * looked up is one its transaction saw, so its commit ({@link committed}) makes it the most recently used: the
   * lookup itself does not reorder (a delete and a set per read were 3% of a claim's client CPU).
   */
  lookup(projector: string, collection: string, id: string): CachedDocument | undefined {
    if (this.stamp === undefined) return undefined;
    return this.docs.get(keyOf(projector, collection, id));
  }

  /**
   * After a commit of this store: the documents its transaction read or wrote, as committed, and the stamp
   * that commit left. Call only after the commit succeeded.
   */
  committed(
    stamp: CacheStamp,
    seen: {
      readonly documents: Iterable<[projector: string, collection: string, id: string, CachedDocument]>;
      /** False when a projector cleared collections: then the cache is emptied instead. */
      readonly complete: boolean;
    },
    heads?: ReadonlyMap<string, StreamHead>,
  ): void {
    if (!seen.complete) {
      this.clear();
      return;
    }
    this.stamp = stamp;
    for (const [id, head] of heads ?? []) {
      this.heads.delete(id);
      this.heads.set(id, head);
    }
    for (const id of this.heads.keys()) {
      if (this.heads.size <= this.max) break;
      this.heads.delete(id);
    }
    for (const [projector, collection, id, doc] of seen.documents) {
      const key = keyOf(projector, collection, id);
      this.docs.delete(key);
      this.docs.set(key, doc);
    }
    for (const key of this.docs.keys()) {
      if (this.docs.size <= this.max) break;
      this.docs.delete(key);
    }
  }

  /** Forgets everything (an unknown outcome, a rebuild, another writer). */
  clear(): void {
    this.stamp = undefined;
    this.docs.clear();
    this.heads.clear();
  }

  /** How many documents it holds. */
  get size(): number {
    return this.docs.size;
  }
}
