import type { EventRegistry, RecordedEvent } from '@demiurge/contracts';
import type { ProjectionTx, Projector } from '@demiurge/event-store';
import { applyOne } from '@demiurge/event-store/adapter';
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { DocumentOverlay } from './document-overlay.js';
import { decodeRow, EVENT_COLUMNS, type EventRow, includedPosition, type LogStatements } from './event-rows.js';
import type { StoreSchema } from './schema.js';
import type { SqlRunner } from './sql-runner.js';
import { DocumentStatements, SqliteProjectionTx } from './sqlite-projection-tx.js';

export interface CatchUpResult {
  readonly applied: number;
  readonly position: number;
  readonly done: boolean;
}

/**
 * Runs projectors inside the caller's transaction: inline on new events, and catching up from
 * their checkpoints (after a version bump, a rebuild, or another process's commits).
 */
export class ProjectorRunner {
  private readonly txs = new Map<string, ProjectionTx>();
  private readonly handles = new Map<string, ReadonlySet<string>>();
  /**
   * The checkpoint rows were read since anything could have changed who follows the head: false at open, after
   * this runner wrote a checkpoint (a catch-up, a reset), and when another connection committed. The writer
   * sets it once a transaction that ran {@link followHead} committed.
   */
  followersChecked = false;
  /** The projectors applied in the append transaction. */
  readonly inline: readonly Projector[];
  /** Each inline projector's version, by name. */
  private readonly inlineVersions: ReadonlyMap<string, number>;
  private readonly inlineTargets: readonly {
    projector: Projector;
    handles: ReadonlySet<string>;
    tx: ProjectionTx;
  }[];
  /** The projectors applied after the commit (`mode: 'async'`, see `AsyncProjections`). */
  readonly async: readonly Projector[];
  /** The documents a group-commit transaction wrote, held until it commits (see {@link DocumentOverlay}). */
  readonly overlay: DocumentOverlay;

  constructor(
    readonly projectors: readonly Projector[],
    db: Database.Database,
    private readonly stmts: LogStatements,
    private readonly registry: EventRegistry,
    private readonly runner: SqlRunner,
    qb: Kysely<StoreSchema>,
  ) {
    const docs = new DocumentStatements(db);
    this.overlay = new DocumentOverlay(docs);
    for (const p of projectors) {
      this.txs.set(p.name, new SqliteProjectionTx(p.name, docs, runner, qb, this.overlay));
      this.handles.set(p.name, new Set(p.handles));
    }
    this.inline = projectors.filter((p) => p.mode !== 'async');
    this.inlineVersions = new Map(this.inline.map((p) => [p.name, p.version]));
    this.inlineTargets = this.inline.map((p) => ({
      projector: p,
      handles: this.handles.get(p.name)!,
      tx: this.txs.get(p.name)!,
    }));
    this.async = projectors.filter((p) => p.mode === 'async');
  }

  /** Applies freshly appended events to every inline projector that handles them. */
  applyNew(events: readonly RecordedEvent[]): void {
    // The append path (every append): each inline projector's types and transaction looked up once, at open.
    for (const { projector, handles, tx } of this.inlineTargets) {
      for (const event of events) if (handles.has(event.type)) applyOne(projector, event, tx);
    }
  }

  /** Applies events to the given projectors, each only the events past `after(projector)`. */
  applyTo(projectors: readonly Projector[], events: readonly RecordedEvent[], after?: (p: Projector) => number): void {
    for (const p of projectors) {
      const from = after?.(p) ?? 0;
      const handles = this.handles.get(p.name)!;
      const tx = this.txs.get(p.name)!;
      for (const event of events) if (event.position > from && handles.has(event.type)) applyOne(p, event, tx);
    }
  }

  /**
   * In the writer's transaction, before its appends, every inline projector caught up to `head` (the log's head
   * now): marks each of them as following the head, and stops at `head` any projector marked so that this writer
   * does not apply inline (not run here, or another version), so that it is caught up from there by whoever
   * runs it. A following projector includes every event of the log because every writer applies it in the
   * append transaction: no commit moves its checkpoint (one page and one statement less per commit), and it is
   * current however far the head moves. Writes only what changed: nothing in a steady state.
   */
  followHead(head: number): void {
    for (const row of this.stmts.checkpoints.all()) {
      const mine = this.inlineVersions.get(row.name) === row.version;
      if (mine && row.follows_head === 0) {
        const projector = this.inline.find((p) => p.name === row.name)!;
        if (row.position < head && this.effectivePosition(projector, row.position) < head) {
          throw new Error(
            `projector ${row.name} is at position ${row.position} of ${head}: it must be caught up first`,
          );
        }
        this.stmts.setFollowsHead.run(1, head, row.name);
      } else if (!mine && row.follows_head === 1) {
        this.stmts.setFollowsHead.run(0, head, row.name);
      }
    }
  }

  /**
   * Whether opening must take the write lock: a projector has no checkpoint or another version, or an
   * event of a type it handles lies past its checkpoint. Plain reads: a read-only command that finds the
   * projectors current (the usual case after a host ran) never waits for the write lock.
   */
  needsCatchUp(): boolean {
    const cps = this.readCheckpoints();
    const head = this.stmts.head.get()!;
    return this.projectors.some((p) => {
      const cp = cps.get(p.name);
      if (!cp || cp.version !== p.version) return true;
      return cp.position < head && this.effectivePosition(p, cp.position) < head;
    });
  }

  /** Empties projectors and sets their checkpoints to (their version, 0). */
  reset(projectors: readonly Projector[]): void {
    for (const p of projectors) {
      const tx = this.txs.get(p.name)!;
      tx.clear();
      p.reset(tx);
      this.stmts.upsertCheckpoint.run(p.name, p.version, 0);
      this.followersChecked = false;
    }
  }

  /** Resets projectors that have no checkpoint yet or whose version changed. */
  resetStale(): Projector[] {
    const cps = this.readCheckpoints();
    const stale = this.projectors.filter((p) => cps.get(p.name)?.version !== p.version);
    this.reset(stale);
    return stale;
  }

  /**
   * Applies up to `limit` events past the lagging projectors' checkpoints and advances them.
   * `done` when every given projector has reached the head.
   */
  catchUp(projectors: readonly Projector[], limit: number): CatchUpResult {
    const cps = this.readCheckpoints();
    const head = this.stmts.head.get()!;
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
    // `+type`: walk the log by position (the primary key, already in order) instead of the type index,
    // which for several types would collect and sort every matching event of the range at each batch.
    const rows = this.runner
      .statement(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE position > ? AND position <= ? AND +type IN (${types.map(() => '?').join(', ')})
         ORDER BY position LIMIT ?`,
      )
      .all(from, head, ...types, limit) as EventRow[];
    for (const row of rows) {
      const event = decodeRow(this.registry, row);
      for (const p of lagging) {
        if (event.position > cps.get(p.name)!.position && this.handles.get(p.name)!.has(event.type)) {
          applyOne(p, event, this.txs.get(p.name)!);
        }
      }
    }
    const position = rows.length < limit ? head : rows[rows.length - 1]!.position;
    for (const p of lagging) {
      if (cps.get(p.name)!.position < position) this.stmts.setCheckpoint.run(position, p.name);
    }
    this.followersChecked = false;
    return { applied: rows.length, position, done: position >= head };
  }

  /**
   * The position a projector's read model includes: its stored checkpoint, or the head when no event
   * of a type it handles lies past that checkpoint (checkpoints move only when a commit applies events).
   */
  effectivePosition(projector: Projector, stored: number): number {
    const types = projector.handles;
    const pending = this.runner
      .statement(`SELECT 1 FROM events WHERE position > ? AND type IN (${types.map(() => '?').join(', ')}) LIMIT 1`)
      .get(stored, ...types);
    return pending === undefined ? this.stmts.head.get()! : stored;
  }

  /** Each projector's version and the position its documents include (the head for one following it). */
  readCheckpoints(): Map<string, { version: number; position: number }> {
    const rows = this.stmts.checkpoints.all();
    const head = rows.some((r) => r.follows_head === 1) ? this.stmts.head.get()! : 0;
    return new Map(rows.map((r) => [r.name, { version: r.version, position: includedPosition(r, head) }]));
  }
}
