import type { DocumentStatements } from './sqlite-projection-tx.js';

interface Pending {
  readonly projector: string;
  readonly collection: string;
  readonly id: string;
  /** The encoded document, or null: deleted. */
  readonly doc: string | null;
}

const keyOf = (projector: string, collection: string, id: string) => `${projector}\u0000${collection}\u0000${id}`;

/**
 * The projection documents a group-commit transaction wrote, held until just before it commits: a document
 * written by several appends of one batch (the operator-status counters, eight claims moving the same two
 * counts) reaches SQLite once, and a document read after being written in the batch is not read back from
 * SQLite. Each append marks where it began, so the refusal of one (its savepoint rolled back) drops its
 * writes and keeps the others'. Inactive outside a group commit (catch-up, rebuild, reset write through).
 */
export class DocumentOverlay {
  private readonly pending = new Map<string, Pending>();
  /**
   * What the held entries were when the current append began (undefined: not held), for every entry it
   * wrote and every entry a flush wrote to SQLite since: rolling back its savepoint also undoes in SQLite
   * what an earlier append of the batch held and a flush wrote, so those are held again.
   */
  private beforeMark = new Map<string, Pending | undefined>();
  /** A mark was set in this transaction (appends run in savepoints): writes record what they replace. */
  private tracking = false;
  private active = false;

  constructor(private readonly hot: DocumentStatements) {}

  get isActive(): boolean {
    return this.active;
  }

  /** Starts holding writes (a group-commit transaction began). */
  begin(): void {
    this.pending.clear();
    this.beforeMark.clear();
    this.tracking = false;
    this.active = true;
  }

  /** Stops holding writes and drops anything not flushed (the transaction ended, committed or not). */
  end(): void {
    this.pending.clear();
    this.beforeMark.clear();
    this.tracking = false;
    this.active = false;
  }

  /**
   * An append begins: its writes can be undone by {@link rollbackToMark}. Until the first mark of a transaction
   * nothing is recorded for a rollback (a batch without savepoints never rolls one append back).
   */
  mark(): void {
    this.tracking = true;
    this.beforeMark.clear();
  }

  /** The append since the mark was refused: its writes are dropped. */
  rollbackToMark(): void {
    for (const [key, before] of this.beforeMark) {
      if (before === undefined) this.pending.delete(key);
      else this.pending.set(key, before);
    }
    this.beforeMark.clear();
  }

  /** The held document: its encoded text, null when deleted in this batch, undefined when not held. */
  read(projector: string, collection: string, id: string): string | null | undefined {
    return this.pending.get(keyOf(projector, collection, id))?.doc;
  }

  write(projector: string, collection: string, id: string, doc: string | null): void {
    const key = keyOf(projector, collection, id);
    if (this.tracking && !this.beforeMark.has(key)) this.beforeMark.set(key, this.pending.get(key));
    this.pending.set(key, { projector, collection, id, doc });
  }

  /** Writes every held document to SQLite (before a list, a clear, and the commit). */
  flush(): void {
    for (const [key, p] of this.pending) {
      if (this.tracking && !this.beforeMark.has(key)) this.beforeMark.set(key, p);
      if (p.doc === null) this.hot.delete.run(p.projector, p.collection, p.id);
      else this.hot.put.run(p.projector, p.collection, p.id, p.doc);
    }
    this.pending.clear();
  }
}
