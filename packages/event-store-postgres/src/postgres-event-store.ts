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
  type DecidedAppend,
  type DecidedAppendResult,
  InvalidAppendError,
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
  iterateInBatches,
  planAppend,
  selectProjectors,
} from '@demiurge/event-store/adapter';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import type { Observable } from 'rxjs';
import { type AppendCache, appendInTransaction, type GroupEntry, type GroupOutcome } from './append-transaction.js';
import { connectionError, createClient, createPool, redactUrl } from './connection.js';
import { createDatabaseClock, type DatabaseClock, type DatabaseClockOptions, serverTimeOf } from './database-clock.js';
import { DocumentCache } from './document-cache.js';
import { decodeRow, EVENT_COLUMNS, type EventRow } from './event-rows.js';
import { GroupCommit } from './group-commit.js';
import { type ChainHead, type ChainReport, walkChain } from './hash-chain.js';
import { catchUpProjectors, lockHead } from './head-lock.js';
import { Lockstep } from './lockstep.js';
import { LogPublisher } from './log-publisher.js';
import { migrate } from './migrations.js';
import { NotifyListener } from './notify-listener.js';
import { PipelinedTransactions } from './pipelined-transaction.js';
import type { PostgresEventStore, PostgresEventStoreOptions } from './postgres-store-options.js';
import { createProjectionReader } from './projection-reader.js';
import { ProjectorRunner } from './projector-runner.js';
import type { StoreSchema } from './schema.js';
import { subscribeFrom } from './subscribe-from.js';
import { startFromCache } from './write-statement.js';

/**
 * Opens the PostgreSQL event store: connects (a refused connection or bad credentials is one clear
 * {@link StoreUnavailableError}), migrates the schema (refusing a newer one), brings every projector up to the
 * head and starts listening for other hosts' commits.
 *
 * @example
 * const store = await openPostgresEventStore({ url: 'postgres://demiurge:secret@db:5432/demiurge', projectors });
 */
export async function openPostgresEventStore(options: PostgresEventStoreOptions): Promise<PostgresEventStore> {
  const store = new PgStore(options);
  try {
    await store.initialize();
    return store;
  } catch (err) {
    await store.close().catch(() => {});
    throw connectionError(err, options.url);
  }
}

class PgStore implements PostgresEventStore {
  readonly url: string;
  readonly registry: EventRegistry;
  readonly projectorNames: readonly string[];
  readonly events$: Observable<RecordedEvent>;
  private readonly projectors: readonly Projector[];
  private readonly clock: Clock;
  private readonly ids: IdGenerator;
  private readonly pool: pg.Pool;
  private readonly db: Kysely<StoreSchema>;
  /** The appends' transactions: BEGIN and COMMIT pipelined with their first and last statements. */
  private readonly transactions: PipelinedTransactions;
  private readonly runner: ProjectorRunner;
  private readonly publisher: LogPublisher;
  /** Projection documents as this store's last commit left them (used only while no one else has written). */
  private readonly documents: DocumentCache | undefined;
  private listener: NotifyListener | undefined;
  /** Appends (and rebuilds) of this store run one after another, in call order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Appends waiting for their turn, taken together (a group commit). */
  private readonly group: GroupCommit;
  private closed = false;
  /** The highest head a notification told of (any host's commit): past the cache's stamp, the cache is stale. */
  private notifiedHead = 0;
  /** Database clocks made by this store: their re-sampling stops when it closes. */
  private readonly clocks: DatabaseClock[] = [];
  private closing: Promise<void> | undefined;
  /** The `lockstep` option's queue (a simulation): every statement in call order, one at a time. */
  private readonly lockstep: Lockstep | undefined;

  constructor(private readonly options: PostgresEventStoreOptions) {
    this.url = redactUrl(options.url);
    this.registry = options.registry ?? domainEvents;
    this.projectors = options.projectors ?? [];
    assertDistinctProjectors(this.projectors);
    this.projectorNames = this.projectors.map((p) => p.name);
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? createIdGenerator(this.clock);
    this.pool = createPool(options, (err) => options.onConnectionError?.(err));
    this.db = new Kysely<StoreSchema>({ dialect: new PostgresDialect({ pool: this.pool }) });
    this.transactions = new PipelinedTransactions(this.pool);
    this.runner = new ProjectorRunner(this.projectors, this.registry);
    this.group = new GroupCommit({
      run: (entries) => this.appendTogether(entries),
      serially: (work) => this.serially(work),
      named: (err) => connectionError(err, this.options.url),
    });
    const cached = options.cachedDocuments ?? 5000;
    this.documents = cached > 0 ? new DocumentCache(cached) : undefined;
    this.publisher = new LogPublisher((after, upTo, limit) => this.readRange(after + 1, limit, undefined, upTo));
    this.events$ = this.publisher.events$;
    this.lockstep = options.lockstep ? new Lockstep() : undefined;
  }

  async initialize(): Promise<void> {
    await migrate(this.db, this.url, () => new Date(this.clock.now()).toISOString());
    if (this.projectors.length > 0) {
      await this.db.transaction().execute(async (tx) => {
        await lockHead(tx, { touch: true });
        await this.runner.resetStale(tx);
      });
      await catchUpProjectors(this.db, this.runner, this.projectors, this.options.catchUpBatchSize ?? 5000);
    }
    // A lockstep store (a simulation) is woken by nobody: another host's commits are published before its own next
    // one (the gap is read first), never at the moment a notification happens to arrive.
    if (!this.lockstep) {
      this.listener = new NotifyListener({
        connect: () => createClient(this.options),
        onHead: (head) => {
          this.notifiedHead = Math.max(this.notifiedHead, head);
          this.publisher.notified(head);
        },
        onReconnected: () => {
          this.head().then(
            (head) => this.publisher.notified(head),
            (err: unknown) => this.publisher.fail(err),
          );
        },
        onLost: (err) => this.publisher.fail(connectionError(err, this.options.url)),
      });
      await this.listener.start();
    }
    this.publisher.start(await this.head());
  }

  append(input: AppendStream | readonly AppendStream[], options?: AppendOptions): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    let plan: AppendPlan;
    try {
      plan = planAppend(input, options, { registry: this.registry, ids: this.ids, clock: this.clock });
    } catch (err) {
      return Promise.reject(err);
    }
    return this.group.enqueue<AppendResult>(plan);
  }

  /**
   * Decides under the log-head lock: the listings are read in the statement that takes the lock, `decide` runs
   * in the append's turn of its group commit (after the appends before it, whose streams it is told), and what
   * it decides is checked and appended like any append, in the same transaction.
   */
  appendDecided<R>(request: DecidedAppend<R>): Promise<DecidedAppendResult<R>> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    if (request.options?.idempotencyKey !== undefined) {
      return Promise.reject(new InvalidAppendError('a decided append cannot carry an idempotency key'));
    }
    const deps = { registry: this.registry, ids: this.ids, clock: this.clock };
    return this.group.enqueue<DecidedAppendResult<R>>({
      decided: request as DecidedAppend<unknown>,
      plan: (streams, options) => planAppend(streams, options, deps),
    });
  }

  /** One transaction of appends, then their events published in order. */
  private async appendTogether(entries: readonly GroupEntry[]): Promise<GroupOutcome[]> {
    const cache: AppendCache | undefined = this.documents && { documents: this.documents };
    const attempt = (from?: Parameters<typeof appendInTransaction>[6]) =>
      this.transactions.run((t) =>
        appendInTransaction(t, entries, this.registry, this.runner, this.projectors, cache, from),
      );
    let results: GroupOutcome[] | undefined;
    try {
      // From the cache when it can (one round trip, checked under the lock), else (or if another wrote) locked first.
      const fromCache = cache && startFromCache(entries, cache.documents, this.notifiedHead);
      results = (fromCache && (await attempt(fromCache))) || (await attempt());
    } catch (err) {
      // Committed or not, the cache cannot tell: forget it.
      this.documents?.clear();
      throw err;
    }
    if (!results) throw new Error('an append under the lock came back undecided');
    const done = cache?.committed;
    if (done) cache.documents.committed(done.stamp, done.seen, done.heads);
    for (const r of results) {
      const appended = r instanceof Error ? undefined : 'result' in r ? r.appended : r;
      if (appended && !appended.replayed) await this.publisher.publish(appended.events);
    }
    return results;
  }

  async streamVersion(streamId: string): Promise<number> {
    const row = await this.read(() =>
      this.db
        .selectFrom('events')
        .select('stream_version')
        .where('stream_id', '=', streamId)
        .orderBy('stream_version', 'desc')
        .limit(1)
        .executeTakeFirst(),
    );
    return row?.stream_version ?? 0;
  }

  async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    const limit = options?.limit;
    const { rows } = await this.read(() =>
      sql<EventRow>`SELECT ${sql.raw(EVENT_COLUMNS)} FROM events
        WHERE stream_id = ${streamId} AND stream_version >= ${options?.fromVersion ?? 1}
        ORDER BY stream_version ${limit === undefined ? sql`` : sql`LIMIT ${limit}`}`.execute(this.db),
    );
    return rows.map((row) => decodeRow(this.registry, row));
  }

  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
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
    const row = await this.read(() => this.db.selectFrom('log_head').select('position').executeTakeFirstOrThrow());
    return Number(row.position);
  }

  async chainHead(): Promise<ChainHead> {
    const row = await this.read(() =>
      this.db.selectFrom('log_head').select(['position', 'hash']).executeTakeFirstOrThrow(),
    );
    return { position: Number(row.position), hash: row.hash.toString('hex') };
  }

  pendingQueries(): number {
    const queued = this.lockstep?.pending ?? 0;
    return queued + this.pool.totalCount - this.pool.idleCount + this.pool.waitingCount;
  }

  async databaseClock(options?: DatabaseClockOptions): Promise<DatabaseClock> {
    const clock = await createDatabaseClock(serverTimeOf(this.pool), options);
    this.clocks.push(clock);
    return clock;
  }

  verifyChain(options?: { batchSize?: number; kept?: ChainHead }): Promise<ChainReport> {
    return walkChain(
      (after, limit) =>
        this.read(async () => {
          const { rows } = await sql<
            EventRow & { idempotency_key: string | null; hash: Buffer | null }
          >`SELECT ${sql.raw(EVENT_COLUMNS)}, idempotency_key, hash FROM events WHERE position > ${after}
            ORDER BY position LIMIT ${limit}`.execute(this.db);
          return rows;
        }),
      () => this.chainHead(),
      options,
    );
  }

  subscribe(options?: SubscribeOptions): Observable<RecordedEvent> {
    return subscribeFrom(
      {
        head: () => this.head(),
        readRange: (from, limit, types) => this.readRange(from, limit, types),
        events$: this.events$,
      },
      options,
    );
  }

  projection(name: string): ProjectionReader {
    const projector = selectProjectors(this.projectors, [name])[0]!;
    return createProjectionReader(projector, {
      db: this.db,
      runner: this.runner,
      read: (work) => this.read(work),
      head: () => this.head(),
    });
  }

  rebuild(options?: RebuildOptions): Promise<RebuildReport> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    let selected: Projector[];
    try {
      selected = selectProjectors(this.projectors, options?.projectors);
    } catch (err) {
      return Promise.reject(err);
    }
    const started = this.clock.now();
    return this.serially(async () => {
      this.documents?.clear();
      await this.db.transaction().execute(async (tx) => {
        await lockHead(tx, { touch: true });
        await this.runner.reset(tx, selected);
      });
      const head = await this.head();
      const applied = await catchUpProjectors(
        this.db,
        this.runner,
        selected,
        options?.batchSize ?? 5000,
        (position, eventsApplied) =>
          options?.onProgress?.({ projectors: selected.map((p) => p.name), position, head, eventsApplied }),
      );
      const cps = await this.runner.readCheckpoints(this.db);
      return {
        projectors: selected.map((p) => ({
          name: p.name,
          version: p.version,
          position: cps.get(p.name)?.position ?? 0,
        })),
        eventsApplied: applied,
        durationMs: this.clock.now() - started,
      };
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.queue.catch(() => {});
      this.closed = true;
      for (const clock of this.clocks) clock.close();
      await this.publisher.drain();
      this.publisher.complete();
      await this.listener?.stop();
      await this.db.destroy();
    })();
    return this.closing;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(() => {
      if (this.closed) throw new StoreClosedError();
      return (this.lockstep ? this.lockstep.run(work) : work()).catch((err: unknown) => {
        throw connectionError(err, this.options.url);
      });
    });
    this.queue = next.catch(() => {});
    return next;
  }

  private async read<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreClosedError();
    try {
      return await (this.lockstep ? this.lockstep.run(work) : work());
    } catch (err) {
      throw connectionError(err, this.options.url);
    }
  }

  private async readRange(
    from: number,
    limit: number | undefined,
    types: readonly string[] | undefined,
    upTo?: number,
  ): Promise<RecordedEvent[]> {
    const { rows } = await this.read(() =>
      sql<EventRow>`SELECT ${sql.raw(EVENT_COLUMNS)} FROM events WHERE position >= ${from}
        ${upTo === undefined ? sql`` : sql`AND position <= ${upTo}`}
        ${types ? sql`AND type = ANY(${[...types]}::text[])` : sql``}
        ORDER BY position ${limit === undefined ? sql`` : sql`LIMIT ${limit}`}`.execute(this.db),
    );
    return rows.map((row) => decodeRow(this.registry, row));
  }
}
