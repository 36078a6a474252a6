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
  type AppendResult,
  type AppendStream,
  DamagedStoreError,
  InvalidAppendError,
  type IterateOptions,
  type ProjectionReader,
  type Projector,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RebuildOptions,
  type RebuildReport,
  StoreBusyError,
  StoreClosedError,
  StreamTypeMismatchError,
  type SubscribeOptions,
} from '@demiurge/event-store';
import {
  type AppendPlan,
  assertDistinctProjectors,
  catchUpSubscription,
  checkExpectedVersion,
  eventIdempotencyKey,
  iterateInBatches,
  planAppend,
  selectProjectors,
  toRecorded,
} from '@demiurge/event-store/adapter';
import Database from 'better-sqlite3';
import { Observable } from 'rxjs';
import { openDatabase } from './connection.js';
import { decodeRow, type EventRow, LogStatements } from './event-rows.js';
import { type ChainHead, type ChainReport, ChainWalker, compareKept, eventHash, GENESIS_HASH } from './hash-chain.js';
import { LogPublisher } from './log-publisher.js';
import { createProjectionReader } from './projection-reader.js';
import { ProjectorRunner } from './projector-runner.js';
import { createQueryBuilder } from './schema.js';
import { SqlRunner } from './sql-runner.js';
import type { ConnectionSettings, SqliteEventStore, SqliteEventStoreOptions } from './sqlite-store-options.js';
import { isCorruption } from './store-file-check.js';

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
  /** Set at the first corruption error: from then on the store refuses everything with it (fail-stop). */
  private damaged: DamagedStoreError | undefined;
  /** The chain's head inside the append transaction: the last inserted position and its hash. */
  private chain: { position: number; hash: Buffer } = { position: 0, hash: GENESIS_HASH };
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
      () => !this.closed && !this.flushing && !this.damaged,
      (err) => this.failStop(err),
    );
    this.events$ = this.publisher.events$;
  }

  async initialize(batchSize: number): Promise<void> {
    this.guard(() => this.transaction(() => this.projections.resetStale()));
    while (!this.guard(() => this.transaction(() => this.projections.catchUp(this.projectors, batchSize))).done) {
      await yieldToLoop();
    }
    this.guard(() => {
      this.projectionDataVersion = this.stmts.dataVersion.get()!;
      this.publisher.start();
    });
  }

  append(input: AppendStream | readonly AppendStream[], options?: AppendOptions): Promise<AppendResult> {
    if (this.damaged) return Promise.reject(this.damaged);
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
    return this.guard(() => this.stmts.streamHead.get(streamId)?.stream_version ?? 0);
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    if (options?.limit === undefined) {
      // The command handlers' hot path (load an aggregate): one prepared statement.
      const rows = this.guard(() => this.stmts.stream.all(streamId, options?.fromVersion ?? 1));
      return rows.map((row) => decodeRow(this.registry, row));
    }
    let query = this.qb
      .selectFrom('events')
      .selectAll()
      .where('stream_id', '=', streamId)
      .where('stream_version', '>=', options?.fromVersion ?? 1)
      .orderBy('stream_version');
    if (options?.limit !== undefined) query = query.limit(options.limit);
    return this.guard(() => this.runner.all(query)).map((row) => decodeRow(this.registry, row as EventRow));
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.readRange(options?.from ?? 1, options?.limit, options?.types);
  }

  iterate(options?: IterateOptions): AsyncIterable<RecordedEvent> {
    return iterateInBatches(
      (from, limit) => this.readRange(from, limit, options?.types),
      options?.from ?? 1,
      options?.batchSize ?? 1000,
    );
  }

  async head(): Promise<number> {
    return this.guard(() => this.stmts.head.get()!);
  }

  async chainHead(): Promise<ChainHead> {
    const row = this.guard(() => this.stmts.chainHead.get());
    if (!row) return { position: 0, hash: GENESIS_HASH.toString('hex') };
    return { position: row.position, hash: row.hash?.toString('hex') ?? '' };
  }

  async verifyChain(options?: { batchSize?: number; kept?: ChainHead }): Promise<ChainReport> {
    const batchSize = options?.batchSize ?? 5000;
    const walker = new ChainWalker(options?.kept?.position);
    let last = 0;
    for (;;) {
      const rows = this.guard(() => this.stmts.chainRows.all(last, batchSize));
      for (const row of rows) if (!walker.next(row)) break;
      if (walker.firstBreak || rows.length < batchSize) break;
      last = rows[rows.length - 1]!.position;
      await yieldToLoop();
    }
    const head = await this.chainHead();
    const kept = options?.kept ? compareKept(options.kept, walker, head) : undefined;
    return {
      ok: walker.firstBreak === undefined && (kept?.ok ?? true),
      eventsChecked: walker.checked,
      head,
      ...(walker.firstBreak ? { firstBreak: walker.firstBreak } : {}),
      ...(kept ? { kept } : {}),
    };
  }

  subscribe(options?: SubscribeOptions): Observable<RecordedEvent> {
    return new Observable<RecordedEvent>((subscriber) => {
      const from = options?.from ?? this.guard(() => this.stmts.head.get()!) + 1;
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
      guard: (read) => this.guard(read),
    });
  }

  async rebuild(options?: RebuildOptions): Promise<RebuildReport> {
    this.assertUsable();
    const selected = selectProjectors(this.projectors, options?.projectors);
    const started = this.clock.now();
    const batchSize = options?.batchSize ?? 5000;
    while (this.flushing || this.exclusive) await yieldToLoop();
    this.exclusive = true;
    try {
      this.guard(() => this.transaction(() => this.projections.reset(selected)));
      const head = this.guard(() => this.stmts.head.get()!);
      let applied = 0;
      for (;;) {
        const step = this.guard(() => this.transaction(() => this.projections.catchUp(selected, batchSize)));
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
      const cps = this.guard(() => this.projections.readCheckpoints());
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
    this.assertUsable();
    return {
      journalMode: this.db.pragma('journal_mode', { simple: true }) as string,
      synchronous: this.db.pragma('synchronous', { simple: true }) as number,
      busyTimeoutMs: this.db.pragma('busy_timeout', { simple: true }) as number,
      foreignKeys: this.db.pragma('foreign_keys', { simple: true }) === 1,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    while (!this.damaged && (this.pending.length > 0 || this.flushing || this.exclusive)) {
      this.schedule();
      await yieldToLoop();
    }
    this.closed = true;
    this.publisher.complete();
    if (this.damaged) closeWithoutCheckpoint(this.db, this.path);
    else this.db.close();
  }

  /**
   * Runs synchronous database work; a corruption error stops the store (fail-stop): every pending and later
   * call then gets the same {@link DamagedStoreError}.
   */
  private guard<T>(work: () => T): T {
    this.assertUsable();
    try {
      return work();
    } catch (err) {
      throw this.failStop(err);
    }
  }

  /** The error a caller gets for `err`: a {@link DamagedStoreError} (stopping the store) for a corruption error. */
  private failStop(err: unknown): unknown {
    if (this.damaged) return this.damaged;
    if (!isCorruption(err)) return err;
    this.damaged = new DamagedStoreError(
      this.path,
      `SQLite reported "${(err as Error).message}" while the store was in use`,
      { cause: err, inUse: true },
    );
    for (const pending of this.pending.splice(0)) pending.reject(this.damaged);
    const damaged = this.damaged;
    queueMicrotask(() => this.options.onDamaged?.(damaged));
    return damaged;
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
    if (this.flushing || this.exclusive || this.damaged) return;
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
        const error = isBusy(err) ? new StoreBusyError(Date.now() - started, { cause: err }) : this.failStop(err);
        return batch.map(() => ({ ok: false, error }));
      }
    }
  }

  private commitBatch(batch: readonly PendingAppend[]): Outcome[] {
    if (this.damaged) throw this.damaged;
    return this.transaction(() => {
      this.catchUpForeignWrites();
      const head = this.stmts.chainHead.get();
      this.chain = { position: head?.position ?? 0, hash: head?.hash ?? GENESIS_HASH };
      const savepoints = batch.length > 1;
      let last = 0;
      const touched = new Set<Projector>();
      const outcomes = batch.map((pending): Outcome => {
        if (!savepoints) return { ok: true, value: this.appendInTx(pending.plan, touched) };
        this.stmts.savepoint.run();
        const mine = new Set<Projector>();
        const chain = this.chain;
        try {
          const value = this.appendInTx(pending.plan, mine);
          this.stmts.release.run();
          for (const p of mine) touched.add(p);
          return { ok: true, value };
        } catch (error) {
          if (isCorruption(error)) throw error;
          this.stmts.rollbackTo.run();
          this.stmts.release.run();
          this.chain = chain;
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
        const position = this.insert(plan, stream.streamType, stream.streamId, version, event, events.length);
        events.push(toRecorded(plan, stream, event, position, version));
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
  ): number {
    const row = {
      position: this.chain.position + 1,
      event_id: event.eventId,
      stream_type: streamType,
      stream_id: streamId,
      stream_version: version,
      type: event.type,
      schema_version: event.schemaVersion,
      data: JSON.stringify(event.data),
      meta: JSON.stringify(event.meta),
      recorded_at: plan.recordedAt,
      idempotency_key: plan.idempotencyKey === undefined ? null : eventIdempotencyKey(plan.idempotencyKey, index),
    };
    const hash = eventHash(this.chain.hash, row);
    try {
      this.stmts.insert.run(
        row.position,
        row.event_id,
        row.stream_type,
        row.stream_id,
        row.stream_version,
        row.type,
        row.schema_version,
        row.data,
        row.meta,
        row.recorded_at,
        row.idempotency_key,
        hash,
      );
      this.chain = { position: row.position, hash };
      return row.position;
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
    return this.guard(() => this.runner.all(query)).map((row) => decodeRow(this.registry, row as EventRow));
  }

  private assertUsable(): void {
    if (this.damaged) throw this.damaged;
    if (this.closed) throw new StoreClosedError();
  }
}

/**
 * Closes a damaged store's connection without checkpointing its WAL into the file: a read-only connection
 * holds the file open meanwhile (SQLite checkpoints on close only as the last connection), and a read-only
 * connection never checkpoints.
 */
function closeWithoutCheckpoint(db: Database.Database, path: string): void {
  let holder: Database.Database | undefined;
  try {
    holder = new Database(path, { readonly: true, fileMustExist: true });
    holder.pragma('schema_version');
  } catch {
    // the holder only keeps the file open; a damaged page it cannot read does not matter
  }
  try {
    db.close();
  } finally {
    holder?.close();
  }
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}
