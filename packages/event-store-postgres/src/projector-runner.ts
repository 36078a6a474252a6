import type { EventRegistry, RecordedEvent } from '@demiurge/contracts';
import { type Projector, ProjectorFailedError } from '@demiurge/event-store';
import { type Kysely, sql } from 'kysely';
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
    for (const p of projectors) {
      const handles = this.handles.get(p.name)!;
      const mine = events.filter((e) => handles.has(e.type));
      if (mine.length === 0) continue;
      const overlay = new OverlayProjectionTx(p.name);
      for (const event of mine) {
        await runWithLoads(tx, overlay, () => {
          try {
            p.apply(event, overlay);
          } catch (cause) {
            if (cause instanceof OverlayMiss) throw cause;
            throw new ProjectorFailedError(p.name, event.type, event.position, { cause });
          }
        });
      }
      await flush(tx, overlay);
    }
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
      await flush(tx, overlay);
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

/** Writes an overlay's documents: clears first, then deletes and upserts, one statement each. */
async function flush(tx: Db, overlay: OverlayProjectionTx): Promise<void> {
  if (!overlay.dirty) return;
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
  const put: { c: string[]; i: string[]; d: string[] } = { c: [], i: [], d: [] };
  const gone: { c: string[]; i: string[] } = { c: [], i: [] };
  for (const [collection, docs] of written.docs) {
    for (const [id, doc] of docs) {
      if (doc === null) {
        gone.c.push(collection);
        gone.i.push(id);
      } else {
        put.c.push(collection);
        put.i.push(id);
        put.d.push(doc);
      }
    }
  }
  if (gone.c.length > 0) {
    await sql`DELETE FROM projection_documents WHERE projector = ${name}
      AND (collection, id) IN (SELECT c COLLATE "C", i COLLATE "C" FROM unnest(${gone.c}::text[], ${gone.i}::text[]) AS t(c, i))`.execute(
      tx,
    );
  }
  if (put.c.length > 0) {
    await sql`INSERT INTO projection_documents (projector, collection, id, doc)
      SELECT ${name}, c, i, d FROM unnest(${put.c}::text[], ${put.i}::text[], ${put.d}::text[]) AS t(c, i, d)
      ON CONFLICT (projector, collection, id) DO UPDATE SET doc = excluded.doc`.execute(tx);
  }
}
