import type { EventRegistry, RecordedEvent } from '@demiurge/contracts';
import { type Projector, ProjectorFailedError } from '@demiurge/event-store';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { CachedDocument, DocumentCache } from './document-cache.js';
import { decodeRow, EVENT_COLUMNS, type EventRow } from './event-rows.js';
import { OverlayMiss, OverlayProjectionTx } from './overlay-projection-tx.js';
import type { StoreSchema } from './schema.js';

type Db = Kysely<StoreSchema>;

export interface CatchUpResult {
  readonly applied: number;
  readonly position: number;
  readonly done: boolean;
}

/** A projector that keeps asking for documents it never reads twice alike is a bug; stop it rather than spin. */
const MAX_LOADS_PER_EVENT = 10_000;

/**
 * Runs projectors inside a PostgreSQL transaction that holds the log-head lock: inline on new events, and
 * catching up from their checkpoints (after a version bump, a rebuild, or a host with other projectors).
 * Each projector applies through an {@link OverlayProjectionTx}; its writes are flushed before the commit.
 */
export class ProjectorRunner {
  private readonly handles = new Map<string, ReadonlySet<string>>();

  constructor(
    readonly projectors: readonly Projector[],
    private readonly registry: EventRegistry,
  ) {
    for (const p of projectors) this.handles.set(p.name, new Set(p.handles));
  }

  /** Applies events to the given projectors (each only the events it handles) and writes their documents. */
  async apply(tx: Db, events: readonly RecordedEvent[], projectors = this.projectors): Promise<void> {
    await writeDocuments(tx, await this.applyCollect(tx, events, projectors));
  }

  /**
   * Applies events to the given projectors and returns their document writes for the caller to send (the append
   * sends them in its last statement); clears are sent here, before, so they come first. Misses of all the
   * projectors are loaded together: one statement per round of reads, not one per document.
   */
  async applyCollect(
    tx: Db,
    events: readonly RecordedEvent[],
    projectors = this.projectors,
    cache?: { known: DocumentCache; seen: SeenDocuments; noLoads?: boolean },
    /** Documents read under the lock already (a decided append's listings): as if loaded. */
    preloaded: readonly (readonly [projector: string, collection: string, id: string, doc: string | null])[] = [],
  ): Promise<DocumentWrites> {
    const pending: { p: Projector; overlay: OverlayProjectionTx; events: RecordedEvent[]; next: number }[] = [];
    for (const p of projectors) {
      const handles = this.handles.get(p.name)!;
      const mine = events.filter((e) => handles.has(e.type));
      const known = cache && ((collection: string, id: string) => cache.known.lookup(p.name, collection, id));
      if (mine.length === 0) continue;
      const overlay = new OverlayProjectionTx(p.name, known);
      for (const [projector, collection, id, doc] of preloaded) {
        if (projector === p.name) overlay.loaded(collection, id, doc);
      }
      pending.push({ p, overlay, events: mine, next: 0 });
    }
    for (let loads = 0; ; loads++) {
      const before = pending.reduce((n, item) => n + item.next, 0);
      const misses: { overlay: OverlayProjectionTx; miss: OverlayMiss }[] = [];
      for (const item of pending) {
        while (item.next < item.events.length) {
          const event = item.events[item.next]!;
          item.overlay.begin();
          try {
            item.p.apply(event, item.overlay);
          } catch (cause) {
            if (!(cause instanceof OverlayMiss)) {
              throw new ProjectorFailedError(item.p.name, event.type, event.position, { cause });
            }
            // Drop this event's partial writes; it is applied again once what it read is loaded.
            misses.push({ overlay: item.overlay, miss: cause });
            break;
          }
          item.overlay.keep();
          item.next++;
        }
        // The events after the one that missed wait for its loads; probe them now so that their first reads
        // (most do not depend on the earlier event: another item's documents) join this round's load.
        probeAhead(item, misses);
      }
      if (misses.length === 0) break;
      // Loads since the last event that completed: a projector that keeps asking for new documents is a bug.
      if (pending.reduce((n, item) => n + item.next, 0) > before) loads = 0;
      if (loads >= MAX_LOADS_PER_EVENT) throw misses[0]!.miss;
      if (cache?.noLoads) throw new NeedsLock();
      await loadMisses(tx, misses);
    }
    const writes: DocumentWrites = { put: { p: [], c: [], i: [], d: [] }, gone: { p: [], c: [], i: [] } };
    if (cache) {
      for (const { p, overlay } of pending) {
        const docs = overlay.documents();
        if (docs === undefined) cache.seen.complete = false;
        else for (const [collection, id, doc] of docs) cache.seen.documents.push([p.name, collection, id, doc]);
      }
    }
    for (const { overlay } of pending) {
      if (!overlay.dirty) continue;
      if (cache?.noLoads && (overlay.written.clearedAll || overlay.written.cleared.size > 0)) throw new NeedsLock();
      await clearDocuments(tx, overlay);
      collectWrites(overlay, writes);
    }
    return writes;
  }

  /** Moves the given projectors' checkpoints to `position` (they have applied everything up to it). */
  async checkpoint(tx: Db, projectors: readonly Projector[], position: number): Promise<void> {
    if (projectors.length === 0) return;
    await tx
      .updateTable('projector_checkpoints')
      .set({ position })
      .where(
        'name',
        'in',
        projectors.map((p) => p.name),
      )
      .execute();
  }

  /** Empties projectors (their `reset`) and sets their checkpoints to (their version, 0). */
  async reset(tx: Db, projectors: readonly Projector[]): Promise<void> {
    for (const p of projectors) {
      const overlay = new OverlayProjectionTx(p.name);
      await runWithLoads(tx, overlay, () => {
        overlay.clear();
        p.reset(overlay);
      });
      if (overlay.dirty) {
        await clearDocuments(tx, overlay);
        const writes: DocumentWrites = { put: { p: [], c: [], i: [], d: [] }, gone: { p: [], c: [], i: [] } };
        collectWrites(overlay, writes);
        await writeDocuments(tx, writes);
      }
      await tx
        .insertInto('projector_checkpoints')
        .values({ name: p.name, version: p.version, position: 0 })
        .onConflict((oc) => oc.column('name').doUpdateSet({ version: p.version, position: 0 }))
        .execute();
    }
  }

  /** Resets projectors that have no checkpoint yet or whose version changed. */
  async resetStale(tx: Db): Promise<void> {
    const cps = await this.readCheckpoints(tx);
    await this.reset(
      tx,
      this.projectors.filter((p) => cps.get(p.name)?.version !== p.version),
    );
  }

  /**
   * Applies up to `limit` events past the lagging projectors' checkpoints and advances them; `done` when every
   * given projector has reached `head`.
   */
  async catchUp(tx: Db, projectors: readonly Projector[], head: number, limit: number): Promise<CatchUpResult> {
    const cps = await this.readCheckpoints(tx);
    const lagging = projectors.filter((p) => {
      const cp = cps.get(p.name);
      if (!cp) throw new Error(`projector ${p.name} has no checkpoint`);
      if (cp.version !== p.version) {
        throw new Error(
          `projector ${p.name} is at version ${cp.version} in the database but this code has version ${p.version}; ` +
            'another Demiurge version is writing to this database',
        );
      }
      return cp.position < head;
    });
    if (lagging.length === 0) return { applied: 0, position: head, done: true };
    const from = Math.min(...lagging.map((p) => cps.get(p.name)!.position));
    const types = [...new Set(lagging.flatMap((p) => p.handles))];
    const { rows } = await sql<EventRow>`SELECT ${sql.raw(EVENT_COLUMNS)} FROM events
      WHERE position > ${from} AND position <= ${head} AND type = ANY(${types}::text[])
      ORDER BY position LIMIT ${limit}`.execute(tx);
    const events = rows.map((row) => decodeRow(this.registry, row));
    for (const p of lagging) {
      const after = cps.get(p.name)!.position;
      await this.apply(
        tx,
        events.filter((e) => e.position > after),
        [p],
      );
    }
    const position = rows.length < limit ? head : rows[rows.length - 1]!.position;
    await this.checkpoint(
      tx,
      lagging.filter((p) => cps.get(p.name)!.position < position),
      position,
    );
    return { applied: rows.length, position, done: position >= head };
  }

  /**
   * The position a projector's read model includes: its stored checkpoint, or the head when no event of a
   * type it handles lies past it (a host without this projector may have appended since).
   */
  async effectivePosition(db: Db, projector: Projector, stored: number, head: number): Promise<number> {
    const { rows } = await sql`SELECT 1 FROM events WHERE position > ${stored} AND position <= ${head}
      AND type = ANY(${[...projector.handles]}::text[]) LIMIT 1`.execute(db);
    return rows.length === 0 ? head : stored;
  }

  async readCheckpoints(db: Db): Promise<Map<string, { version: number; position: number }>> {
    const rows = await db.selectFrom('projector_checkpoints').select(['name', 'version', 'position']).execute();
    return new Map(rows.map((r) => [r.name, { version: r.version, position: Number(r.position) }]));
  }
}

/**
 * Applies each event after the one that missed, in a layer that is dropped, only to learn what it would read
 * first that is not loaded yet (it reads the documents as they were before the missed event: a guess, right
 * when it reads another item's documents). A probe's writes and errors are discarded; the real apply of each
 * event happens in order, after the loads.
 */
function probeAhead(
  item: { p: Projector; overlay: OverlayProjectionTx; events: readonly RecordedEvent[]; next: number },
  misses: { overlay: OverlayProjectionTx; miss: OverlayMiss }[],
): void {
  if (item.next >= item.events.length) return;
  const seen = new Set<string>();
  for (let i = item.next + 1; i < item.events.length && seen.size < MAX_PROBED_MISSES; i++) {
    item.overlay.begin();
    try {
      item.p.apply(item.events[i]!, item.overlay);
    } catch (cause) {
      // A whole collection is loaded only when an event really lists it, never on a guess.
      if (cause instanceof OverlayMiss && cause.id !== undefined) {
        const key = `${cause.collection}\u0000${cause.id}`;
        if (!seen.has(key)) {
          seen.add(key);
          misses.push({ overlay: item.overlay, miss: cause });
        }
      }
    } finally {
      item.overlay.begin();
    }
  }
}

/**
 * Thrown by {@link ProjectorRunner.applyCollect} with `noLoads` (an append planned from the document cache, before
 * any statement): a projector needs a document the cache does not hold, or clears collections. Nothing was sent;
 * the append takes the lock and runs the usual way.
 */
export class NeedsLock extends Error {
  constructor() {
    super('the append needs documents the cache does not hold');
  }
}

/** Reads one round of probing ahead adds at most, per projector. */
const MAX_PROBED_MISSES = 500;

/** Runs `work` against the overlay, loading what it misses and running it again, until it completes. */
async function runWithLoads(tx: Db, overlay: OverlayProjectionTx, work: () => void): Promise<void> {
  for (let loads = 0; ; loads++) {
    overlay.begin();
    try {
      work();
      overlay.keep();
      return;
    } catch (err) {
      if (!(err instanceof OverlayMiss) || loads >= MAX_LOADS_PER_EVENT) throw err;
      await load(tx, overlay, err);
    }
  }
}

/** What an append's projectors read and wrote, for the {@link DocumentCache} once it commits. */
export interface SeenDocuments {
  readonly documents: [projector: string, collection: string, id: string, doc: CachedDocument][];
  /** False when a projector cleared collections: the cache must then be emptied instead. */
  complete: boolean;
}

/** Document writes as columns: upserts (projector, collection, id, doc) and deletes (projector, collection, id). */
export interface DocumentWrites {
  readonly put: { p: string[]; c: string[]; i: string[]; d: string[] };
  readonly gone: { p: string[]; c: string[]; i: string[] };
}

async function load(tx: Db, overlay: OverlayProjectionTx, miss: OverlayMiss): Promise<void> {
  const base = tx
    .selectFrom('projection_documents')
    .where('projector', '=', overlay.projector)
    .where('collection', '=', miss.collection);
  if (miss.id === undefined) {
    overlay.loadedCollection(miss.collection, await base.select(['id', 'doc']).execute());
    return;
  }
  const row = await base.select('doc').where('id', '=', miss.id).executeTakeFirst();
  overlay.loaded(miss.collection, miss.id, row?.doc ?? null);
}

/** Loads what the overlays missed: every missed document in one statement, each missed collection in its own. */
async function loadMisses(
  tx: Db,
  misses: readonly { overlay: OverlayProjectionTx; miss: OverlayMiss }[],
): Promise<void> {
  const docs = misses.filter((m) => m.miss.id !== undefined);
  for (const m of misses) if (m.miss.id === undefined) await load(tx, m.overlay, m.miss);
  if (docs.length === 0) return;
  if (docs.length === 1) return load(tx, docs[0]!.overlay, docs[0]!.miss);
  const { rows } = await sql<{ projector: string; collection: string; id: string; doc: string }>`
    SELECT projector, collection, id, doc FROM projection_documents
    WHERE (projector, collection, id) IN (SELECT p COLLATE "C", c COLLATE "C", i COLLATE "C"
      FROM unnest(${docs.map((m) => m.overlay.projector)}::text[], ${docs.map((m) => m.miss.collection)}::text[],
        ${docs.map((m) => m.miss.id!)}::text[]) AS t(p, c, i))`.execute(tx);
  const found = new Map(rows.map((r) => [`${r.projector}\u0000${r.collection}\u0000${r.id}`, r.doc]));
  for (const { overlay, miss } of docs) {
    overlay.loaded(
      miss.collection,
      miss.id!,
      found.get(`${overlay.projector}\u0000${miss.collection}\u0000${miss.id}`) ?? null,
    );
  }
}

/** Sends an overlay's clears (whole projector, or collections): before its other writes. */
async function clearDocuments(tx: Db, overlay: OverlayProjectionTx): Promise<void> {
  const { written } = overlay;
  const name = overlay.projector;
  if (written.clearedAll) await tx.deleteFrom('projection_documents').where('projector', '=', name).execute();
  if (written.cleared.size > 0) {
    await tx
      .deleteFrom('projection_documents')
      .where('projector', '=', name)
      .where('collection', 'in', [...written.cleared])
      .execute();
  }
}

/** Adds an overlay's document puts and deletes to `writes`. */
function collectWrites(overlay: OverlayProjectionTx, writes: DocumentWrites): void {
  const name = overlay.projector;
  for (const [collection, docs] of overlay.written.docs) {
    for (const [id, doc] of docs) {
      if (doc === null) {
        writes.gone.p.push(name);
        writes.gone.c.push(collection);
        writes.gone.i.push(id);
      } else {
        writes.put.p.push(name);
        writes.put.c.push(collection);
        writes.put.i.push(id);
        writes.put.d.push(doc);
      }
    }
  }
}

/**
 * The common table expressions that send `writes` inside a larger statement: `gone` deletes, `put` upserts. The
 * two touch different documents (an overlay holds one state per document), so one statement can run both.
 */
export function documentWritesCtes(writes: DocumentWrites, guard?: RawBuilder<unknown>) {
  const only = guard ? sql` AND ${guard}` : sql``;
  return sql`gone AS (DELETE FROM projection_documents WHERE (projector, collection, id) IN (
      SELECT p COLLATE "C", c COLLATE "C", i COLLATE "C"
      FROM unnest(${writes.gone.p}::text[], ${writes.gone.c}::text[], ${writes.gone.i}::text[]) AS t(p, c, i))${only}),
    put AS (INSERT INTO projection_documents (projector, collection, id, doc)
      SELECT p, c, i, d FROM unnest(${writes.put.p}::text[], ${writes.put.c}::text[], ${writes.put.i}::text[],
        ${writes.put.d}::text[]) AS t(p, c, i, d)${guard ? sql` WHERE ${guard}` : sql``}
      ON CONFLICT (projector, collection, id) DO UPDATE SET doc = excluded.doc)`;
}

/** Sends `writes` in one statement (catch-up and reset; the append folds them into its last statement). */
async function writeDocuments(tx: Db, writes: DocumentWrites): Promise<void> {
  if (writes.put.p.length === 0 && writes.gone.p.length === 0) return;
  await sql`WITH ${documentWritesCtes(writes)} SELECT 1`.execute(tx);
}
