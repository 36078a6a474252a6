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
  type IterateOptions,
  type ProjectionReader,
  type Projector,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RebuildOptions,
  type RebuildReport,
  StoreClosedError,
  type SubscribeOptions,
} from '@demiurge/event-store';
import {
  type AppendPlan,
  assertDistinctProjectors,
  catchUpSubscription,
  iterateInBatches,
  planAppend,
  selectProjectors,
} from '@demiurge/event-store/adapter';
import type Database from 'better-sqlite3';
import { Observable } from 'rxjs';
import { AsyncProjections, type ProjectionLag } from './async-projections.js';
import { openDatabase } from './connection.js';
import { closeWithoutCheckpoint } from './damaged-close.js';
import { decodeRow, type EventRow, LogStatements } from './event-rows.js';
import { GroupCommitWriter } from './group-commit.js';
import { type ChainHead, type ChainReport, ChainWalker, compareKept, GENESIS_HASH } from './hash-chain.js';
import { LogPublisher } from './log-publisher.js';
import { createProjectionReader } from './projection-reader.js';
import { ProjectorRunner } from './projector-runner.js';
import { createQueryBuilder } from './schema.js';
import { SqlRunner } from './sql-runner.js';
import type { ConnectionSettings, SqliteEventStore, SqliteEventStoreOptions } from './sqlite-store-options.js';
import { isCorruption } from './store-file-check.js';
import { StreamCache } from './stream-cache.js';

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
  private readonly writer: GroupCommitWriter;
  private readonly async: AsyncProjections;
  private readonly streams = new StreamCache();
  private closed = false;
  /** Set at the first corruption error: from then on the store refuses everything with it (fail-stop). */
  private damaged: DamagedStoreError | undefined;
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
      () => !this.closed && !this.writer.flushing && !this.damaged,
      (err) => this.failStop(err),
    );
    this.events$ = this.publisher.events$;
    this.async = new AsyncProjections({
      projections: this.projections,
      stmts: this.stmts,
      lagMs: options.asyncProjectionLagMs ?? 50,
      canRun: () => !this.closed && !this.damaged && !this.writer.exclusive && !this.db.inTransaction,
      writerBusy: () => this.writer.busy,
      transaction: (work) => this.transaction(work),
    });
    this.writer = new GroupCommitWriter({
      stmts: this.stmts,
      registry: this.registry,
      projections: this.projections,
      async: this.async,
      streams: this.streams,
      publisher: this.publisher,
      busyRetryMs: options.busyRetryMs ?? 30_000,
      deterministicFlush: options.deterministicFlush ?? false,
      transaction: (work) => this.transaction(work),
      failStop: (err) => this.failStop(err),
      damaged: () => this.damaged,
      onCommit: options.onCommit,
    });
  }

  async initialize(batchSize: number): Promise<void> {
    // Read first: another connection's later commits then change data_version and are caught up at our
    // next commit.
    const dataVersion = this.guard(() => this.stmts.dataVersion.get()!);
    if (this.guard(() => this.projections.needsCatchUp())) {
      this.guard(() => this.transaction(() => this.projections.resetStale()));
      while (!this.guard(() => this.transaction(() => this.projections.catchUp(this.projectors, batchSize))).done) {
        await yieldToLoop();
      }
    }
    this.guard(() => {
      this.writer.projectionDataVersion = dataVersion;
      this.async.start(this.stmts.head.get()!);
      this.publisher.start();
    });
  }

  projectionLag(options?: { reset?: boolean }): ProjectionLag {
    return this.async.lag(options?.reset ?? false);
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
    return this.writer.enqueue(plan);
  }

  async streamVersion(streamId: string): Promise<number> {
    return this.guard(() => this.stmts.streamHead.get(streamId)?.stream_version ?? 0);
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    if (options?.limit === undefined) {
      // The command handlers' hot path (load an aggregate): what this store just wrote or read, else one
      // prepared statement.
      const from = options?.fromVersion ?? 1;
      return this.guard(() => {
        const dataVersion = this.stmts.dataVersion.get()!;
        const cached = this.streams.read(streamId, from, dataVersion);
        if (cached) return cached;
        const events = this.stmts.stream.all(streamId, from).map((row) => decodeRow(this.registry, row));
        if (from <= 1) this.streams.remember(streamId, events, dataVersion);
        return events;
      });
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
    // An asynchronous projector is brought to the head before each read (nothing to do when it is current).
    const catchUp = projector.mode === 'async' ? () => this.async.catchUp() : () => {};
    return createProjectionReader(projector, {
      runner: this.runner,
      projections: this.projections,
      guard: (read) =>
        this.guard(() => {
          catchUp();
          return read();
        }),
    });
  }

  async rebuild(options?: RebuildOptions): Promise<RebuildReport> {
    this.assertUsable();
    const selected = selectProjectors(this.projectors, options?.projectors);
    const started = this.clock.now();
    const batchSize = options?.batchSize ?? 5000;
    while (this.writer.flushing || this.writer.exclusive) await yieldToLoop();
    this.writer.exclusive = true;
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
      this.writer.exclusive = false;
      this.writer.schedule();
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
    while (!this.damaged && this.writer.busy) {
      this.writer.schedule();
      await yieldToLoop();
    }
    // The asynchronous projectors reach the head, their checkpoints too: the next open has nothing to catch up.
    if (!this.damaged) {
      try {
        this.guard(() => this.async.settle());
      } catch (err) {
        if (this.damaged) throw err;
        // A failing asynchronous projector stays behind; the next open catches it up (and reports it).
      }
    }
    this.async.stop();
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
    this.writer.rejectAll(this.damaged);
    const damaged = this.damaged;
    queueMicrotask(() => this.options.onDamaged?.(damaged));
    return damaged;
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
