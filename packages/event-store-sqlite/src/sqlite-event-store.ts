import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  type Clock,
  createIdGenerator,
  domainEvents,
  type EventRegistry,
  type IdGenerator,
  type RecordedEvent,
  systemClock,
} from '@demiurge/contracts';
import {
  type AppendOptions,
  type AppendPlan,
  type AppendResult,
  type AppendStream,
  assertDistinctProjectors,
  catchUpSubscription,
  checkExpectedVersion,
  eventIdempotencyKey,
  InvalidAppendError,
  type IterateOptions,
  iterateInBatches,
  type ProjectionReader,
  type Projector,
  planAppend,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RebuildOptions,
  type RebuildReport,
  StoreBusyError,
  StoreClosedError,
  StreamTypeMismatchError,
  type SubscribeOptions,
  selectProjectors,
  toRecorded,
} from '@demiurge/event-store';
import type Database from 'better-sqlite3';
import { Observable } from 'rxjs';
import { openDatabase } from './connection.js';
import { decodeRow, type EventRow, LogStatements } from './event-rows.js';
import { LogPublisher } from './log-publisher.js';
import { createProjectionReader } from './projection-reader.js';
import { ProjectorRunner } from './projector-runner.js';
import { createQueryBuilder } from './schema.js';
import { SqlRunner } from './sql-runner.js';
import type { ConnectionSettings, SqliteEventStore, SqliteEventStoreOptions } from './sqlite-store-options.js';

interface PendingAppend {
  readonly plan: AppendPlan;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: AppendResult } | { ok: false; error: unknown };

const MAX_BATCH = 512;

/**
 * Opens the SQLite event store at `path`, running migrations and bringing every projector up to
 * the head (rebuilding any whose version changed).
 *
 * @example
 * const store = await openSqliteEventStore({ path: '/home/me/.demiurge/runtime/runtime.sqlite3', projectors });
 */
export async function openSqliteEventStore(options: SqliteEventStoreOptions): Promise<SqliteEventStore> {
  const db = openDatabase(options.path, options);
  try {
    const store = new SqliteStore(db, options);
    await store.initialize(options.catchUpBatchSize ?? 5000);
    return store;
  } catch (err) {
    db.close();
    throw err;
  }
}

class SqliteStore implements SqliteEventStore {
  readonly path: string;
  readonly registry: EventRegistry;
  readonly projectorNames: readonly string[];
  private readonly projectors: readonly Projector[];
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly qb = createQueryBuilder();
  private readonly runner: SqlRunner;
  private readonly stmts: LogStatements;
  private readonly projections: ProjectorRunner;
  private readonly publisher: LogPublisher;
  private readonly pending: PendingAppend[] = [];
  private scheduled = false;
  private flushing = false;
  private exclusive = false;
  private closed = false;
  private projectionDataVersion = -1;
  readonly events$: Observable<RecordedEvent>;

  constructor(
    private readonly db: Database.Database,
    private readonly options: SqliteEventStoreOptions,
  ) {
    this.path = options.path;
    this.registry = options.registry ?? domainEvents;
    this.projectors = options.projectors ?? [];
    assertDistinctProjectors(this.projectors);
    this.projectorNames = this.projectors.map((p) => p.name);
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? createIdGenerator(this.clock);
    this.runner = new SqlRunner(db);
    this.stmts = new LogStatements(db);
    this.projections = new ProjectorRunner(this.projectors, db, this.stmts, this.registry, this.runner, this.qb);
    this.publisher = new LogPublisher(
      this.stmts,
      this.registry,
      options.tailIntervalMs ?? 100,
      () => !this.closed && !this.flushing,
    );
    this.events$ = this.publisher.events$;
  }

  async initialize(batchSize: number): Promise<void> {
    this.transaction(() => this.projections.resetStale());
    while (!this.transaction(() => this.projections.catchUp(this.projectors, batchSize)).done) await yieldToLoop();
    this.projectionDataVersion = this.stmts.dataVersion.get()!;
    this.publisher.start();
  }

  append(input: AppendStream | readonly AppendStream[], options?: AppendOptions): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    let plan: AppendPlan;
    try {
      plan = planAppend(input, options, { registry: this.registry, ids: this.ids, clock: this.clock });
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.pending.push({ plan, resolve, reject });
      this.schedule();
    });
  }

  async streamVersion(streamId: string): Promise<number> {
    this.assertOpen();
    return this.stmts.streamHead.get(streamId)?.stream_version ?? 0;
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    if (options?.limit === undefined) {
      // The command handlers' hot path (load an aggregate): one prepared statement.
      return this.stmts.stream.all(streamId, options?.fromVersion ?? 1).map((row) => decodeRow(this.registry, row));
    }
    let query = this.qb
      .selectFrom('events')
      .selectAll()
      .where('stream_id', '=', streamId)
      .where('stream_version', '>=', options?.fromVersion ?? 1)
      .orderBy('stream_version');
    if (options?.limit !== undefined) query = query.limit(options.limit);
    return this.runner.all(query).map((row) => decodeRow(this.registry, row as EventRow));
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    this.assertOpen();
    return this.readRange(options?.from ?? 1, options?.limit, options?.types);
  }

  iterate(options?: IterateOptions): AsyncIterable<RecordedEvent> {
    return iterateInBatches(
      (from, limit) => {
        this.assertOpen();
        return this.readRange(from, limit, options?.types);
      },
      options?.from ?? 1,
      options?.batchSize ?? 1000,
    );
  }

  async head(): Promise<number> {
    this.assertOpen();
    return this.stmts.head.get()!;
  }

  subscribe(options?: SubscribeOptions): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      const from = options?.from ?? this.stmts.head.get()! + 1;
      return catchUpSubscription(
        async (start, limit) => this.readRange(start, limit, options?.types),
        this.events$,
        from,
        options?.types,
      ).subscribe(subscriber);
    });
  }

  projection(name: string): ProjectionReader {
    const projector = selectProjectors(this.projectors, [name])[0]!;
    return createProjectionReader(projector, {
      runner: this.runner,
      qb: this.qb,
      projections: this.projections,
      assertOpen: () => this.assertOpen(),
    });
  }

  async rebuild(options?: RebuildOptions): Promise<RebuildReport> {
    this.assertOpen();
    const selected = selectProjectors(this.projectors, options?.projectors);
    const started = this.clock.now();
    const batchSize = options?.batchSize ?? 5000;
    while (this.flushing || this.exclusive) await yieldToLoop();
    this.exclusive = true;
    try {
      this.transaction(() => this.projections.reset(selected));
      const head = this.stmts.head.get()!;
      let applied = 0;
      for (;;) {
        const step = this.transaction(() => this.projections.catchUp(selected, batchSize));
        applied += step.applied;
        options?.onProgress?.({
          projectors: selected.map((p) => p.name),
          position: step.position,
          head,
          eventsApplied: applied,
        });
        if (step.done) break;
        await yieldToLoop();
      }
      const cps = this.projections.readCheckpoints();
      return {
        projectors: selected.map((p) => ({
          name: p.name,
          version: p.version,
          position: cps.get(p.name)?.position ?? 0,
        })),
        eventsApplied: applied,
        durationMs: this.clock.now() - started,
      };
    } finally {
      this.exclusive = false;
      if (this.pending.length > 0) this.schedule();
    }
  }

  settings(): ConnectionSettings {
    this.assertOpen();
    return {
      journalMode: this.db.pragma('journal_mode', { simple: true }) as string,
      synchronous: this.db.pragma('synchronous', { simple: true }) as number,
      busyTimeoutMs: this.db.pragma('busy_timeout', { simple: true }) as number,
      foreignKeys: this.db.pragma('foreign_keys', { simple: true }) === 1,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    while (this.pending.length > 0 || this.flushing || this.exclusive) {
      this.schedule();
      await yieldToLoop();
    }
    this.closed = true;
    this.publisher.complete();
    this.db.close();
  }

  // --- group commit -------------------------------------------------------------------------

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Commits everything queued, in batches: one transaction per batch, a savepoint per append. */
  private async flush(): Promise<void> {
    if (this.flushing || this.exclusive) return;
    this.flushing = true;
    try {
      while (this.pending.length > 0 && !this.exclusive) {
        const batch = this.pending.splice(0, MAX_BATCH);
        const outcomes = await this.commitWithRetry(batch);
        this.publisher.publish(outcomes.flatMap((o) => (o.ok && !o.value.replayed ? o.value.events : [])));
        outcomes.forEach((outcome, i) => {
          if (outcome.ok) batch[i]!.resolve(outcome.value);
          else batch[i]!.reject(outcome.error);
        });
      }
    } finally {
      this.flushing = false;
    }
  }

  private async commitWithRetry(batch: readonly PendingAppend[]): Promise<Outcome[]> {
    const started = Date.now();
    const limit = this.options.busyRetryMs ?? 30_000;
    for (let attempt = 0; ; attempt++) {
      try {
        return this.commitBatch(batch);
      } catch (err) {
        if (isBusy(err) && Date.now() - started < limit) {
          await new Promise((r) => setTimeout(r, Math.min(100, 5 * 2 ** attempt) * (0.5 + Math.random())));
          continue;
        }
        const error = isBusy(err) ? new StoreBusyError(Date.now() - started, { cause: err }) : err;
        return batch.map(() => ({ ok: false, error }));
      }
    }
  }

  private commitBatch(batch: readonly PendingAppend[]): Outcome[] {
    return this.transaction(() => {
      this.catchUpForeignWrites();
      const savepoints = batch.length > 1;
      let last = 0;
      const touched = new Set<Projector>();
      const outcomes = batch.map((pending): Outcome => {
        if (!savepoints) return { ok: true, value: this.appendInTx(pending.plan, touched) };
        this.stmts.savepoint.run();
        const mine = new Set<Projector>();
        try {
          const value = this.appendInTx(pending.plan, mine);
          this.stmts.release.run();
          for (const p of mine) touched.add(p);
          return { ok: true, value };
        } catch (error) {
          this.stmts.rollbackTo.run();
          this.stmts.release.run();
          return { ok: false, error };
        }
      });
      for (const o of outcomes) if (o.ok && !o.value.replayed) last = Math.max(last, o.value.lastPosition);
      if (last > 0) this.projections.checkpoint(touched, last);
      return outcomes;
    });
  }

  private appendInTx(plan: AppendPlan, touched: Set<Projector>): AppendResult {
    const key = plan.idempotencyKey;
    if (key !== undefined && this.stmts.keyPosition.get(key) !== undefined) {
      const events = this.stmts.keyEvents
        .all(key, `${key}\u001f`, `${key}\u0020`)
        .map((r) => decodeRow(this.registry, r));
      return { events, lastPosition: events[events.length - 1]!.position, replayed: true };
    }
    const events: RecordedEvent[] = [];
    for (const stream of plan.streams) {
      const head = this.stmts.streamHead.get(stream.streamId);
      if (head && head.stream_type !== stream.streamType) {
        throw new StreamTypeMismatchError(stream.streamId, stream.streamType, head.stream_type);
      }
      let version = head?.stream_version ?? 0;
      checkExpectedVersion(stream.streamId, stream.expectedVersion, version);
      for (const event of stream.events) {
        version++;
        const info = this.insert(plan, stream.streamType, stream.streamId, version, event, events.length);
        events.push(toRecorded(plan, stream, event, Number(info.lastInsertRowid), version));
      }
    }
    this.projections.applyNew(events, touched);
    return { events, lastPosition: events[events.length - 1]!.position, replayed: false };
  }

  private insert(
    plan: AppendPlan,
    streamType: string,
    streamId: string,
    version: number,
    event: AppendPlan['streams'][number]['events'][number],
    index: number,
  ): Database.RunResult {
    try {
      return this.stmts.insert.run(
        event.eventId,
        streamType,
        streamId,
        version,
        event.type,
        event.schemaVersion,
        JSON.stringify(event.data),
        JSON.stringify(event.meta),
        plan.recordedAt,
        plan.idempotencyKey === undefined ? null : eventIdempotencyKey(plan.idempotencyKey, index),
      );
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && /event_id/.test((err as Error).message)) {
        throw new InvalidAppendError(`event id ${event.eventId} is already recorded`, { cause: err });
      }
      throw err;
    }
  }

  /** When another connection committed since we last looked, brings projectors up to the head first. */
  private catchUpForeignWrites(): void {
    const version = this.stmts.dataVersion.get()!;
    if (version === this.projectionDataVersion) return;
    while (!this.projections.catchUp(this.projectors, 1000).done) {
      // each pass applies one batch; the transaction holds the write lock, so the head cannot move
    }
    this.projectionDataVersion = version;
  }

  private transaction<T>(work: () => T): T {
    this.stmts.begin.run();
    try {
      const result = work();
      this.stmts.commit.run();
      return result;
    } catch (err) {
      if (this.db.inTransaction) this.stmts.rollback.run();
      throw err;
    }
  }

  private readRange(from: number, limit: number | undefined, types: readonly string[] | undefined): RecordedEvent[] {
    let query = this.qb.selectFrom('events').selectAll().where('position', '>=', from).orderBy('position');
    if (types) query = query.where('type', 'in', types.length > 0 ? [...types] : ['']);
    if (limit !== undefined) query = query.limit(limit);
    return this.runner.all(query).map((row) => decodeRow(this.registry, row as EventRow));
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
