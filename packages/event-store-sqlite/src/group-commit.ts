import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { backoffMs, type RecordedEvent } from '@demiurge/contracts';
import { type AppendResult, InvalidAppendError, StoreBusyError, StreamTypeMismatchError } from '@demiurge/event-store';
import {
  type AppendPlan,
  checkExpectedVersion,
  eventIdempotencyKey,
  metaJson,
  toRecorded,
} from '@demiurge/event-store/adapter';
import { decodeRow, insertEventRow } from './event-rows.js';
import {
  committedEvents,
  FailedWhileWriting,
  type GroupCommitDeps,
  type Isolation,
  isBusy,
  type Outcome,
  type PendingAppend,
  tellCommit,
} from './group-commit-parts.js';
import { eventHashHex, GENESIS_HASH } from './hash-chain.js';
import { isCorruption } from './store-file-check.js';
import { TransactionStreamHeads } from './stream-heads.js';

const GENESIS_HEX = GENESIS_HASH.toString('hex');
const MAX_BATCH = 512;
/** The longest the writer goes without letting the event loop turn (timers, sockets) between flushes. */
const TURN_EVERY_MS = 2;

/**
 * Group commit: appends queued while a commit runs (or in the same tick) share the next transaction,
 * each in its own savepoint so one append's refusal does not undo the others.
 */
export class GroupCommitWriter {
  private readonly pending: PendingAppend[] = [];
  private scheduled = false;
  /** When the event loop last turned under the writer (a flush scheduled on `setImmediate`, a yield). */
  private lastTurnAt = 0;
  /** Appends in the last batch. */
  private lastBatch = 0;
  /** A commit is running. */
  flushing = false;
  /** A rebuild holds the writer: nothing commits until it ends. */
  exclusive = false;
  /** The chain's head inside the append transaction: the last inserted position and its hash (hex). */
  private chain: { position: number; hex: string } = { position: 0, hex: GENESIS_HEX };
  /** `chain` is the head our last transaction committed (false after a rollback, and before the first). */
  private chainCommitted = false;
  /** `PRAGMA data_version` when the projectors were last known to be at the head. */
  projectionDataVersion = -1;
  /** The stream heads the running transaction's appends are checked against. */
  private readonly heads: TransactionStreamHeads;

  constructor(private readonly deps: GroupCommitDeps) {
    this.heads = new TransactionStreamHeads(deps.stmts, deps.streams);
  }

  /** Anything queued or committing. */
  get busy(): boolean {
    return this.pending.length > 0 || this.flushing || this.exclusive;
  }

  enqueue(plan: AppendPlan): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.pending.push({ plan, resolve, reject });
      this.schedule();
    });
  }

  /** Rejects everything queued with `error` (the store stopped). */
  rejectAll(error: unknown): void {
    for (const pending of this.pending.splice(0)) pending.reject(error);
  }

  /**
   * Flushes on the next turn of the event loop (`setImmediate`), not in a microtask: every append made by
   * the code now running, including its promise continuations (concurrent callers' commands), is queued
   * by then and joins the same commit. One exception saves that turn: when the last batch was a single
   * append (one caller awaiting each command, nothing to batch) and the loop turned less than
   * {@link TURN_EVERY_MS} ago, it flushes in a microtask; timers and sockets still run at least that often.
   */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    if (
      !this.deps.deterministicFlush &&
      this.lastBatch === 1 &&
      !this.exclusive &&
      performance.now() - this.lastTurnAt < TURN_EVERY_MS
    ) {
      queueMicrotask(() => {
        this.scheduled = false;
        void this.flush();
      });
      return;
    }
    setImmediate(() => {
      this.lastTurnAt = performance.now();
      this.scheduled = false;
      void this.flush();
    });
  }

  /**
   * Commits everything queued, in batches: one transaction per batch, a savepoint per append. Between
   * batches it yields to the event loop (timers, socket reads), so a burst of commands never starves them;
   * what arrives meanwhile joins the next batch.
   */
  private async flush(): Promise<void> {
    if (this.flushing || this.exclusive || this.deps.damaged()) return;
    this.flushing = true;
    try {
      for (let first = true; this.pending.length > 0 && !this.exclusive; first = false) {
        if (!first) {
          await yieldToLoop();
          this.lastTurnAt = performance.now();
        }
        if (this.pending.length === 0 || this.exclusive || this.deps.damaged()) break;
        const batch = this.pending.splice(0, MAX_BATCH);
        this.lastBatch = batch.length;
        // Synchronous unless the database is locked (another process): no promise and microtask per commit.
        let outcomes: Outcome[] | Promise<Outcome[]> = this.commitOrRetry(batch);
        if (!Array.isArray(outcomes)) outcomes = await outcomes;
        const events = committedEvents(outcomes);
        // The transaction ran at this data version (the writer caught up to it first): what it wrote is exact there.
        this.deps.streams.committed(events, this.projectionDataVersion);
        this.deps.async.committed(events);
        this.deps.publisher.publish(events);
        outcomes.forEach((outcome, i) => {
          if (outcome.ok) batch[i]!.resolve(outcome.value);
          else batch[i]!.reject(outcome.error);
        });
      }
    } finally {
      this.flushing = false;
    }
  }

  /** The batch's outcomes, committed now, or a promise of them when the database is locked (retried). */
  private commitOrRetry(batch: readonly PendingAppend[]): Outcome[] | Promise<Outcome[]> {
    const started = Date.now();
    try {
      return this.commitBatch(batch);
    } catch (err) {
      if (isBusy(err) && Date.now() - started < this.deps.busyRetryMs) return this.commitWithRetry(batch, started);
      const error = isBusy(err) ? new StoreBusyError(Date.now() - started, { cause: err }) : this.deps.failStop(err);
      return batch.map(() => ({ ok: false, error }));
    }
  }

  private async commitWithRetry(batch: readonly PendingAppend[], started: number): Promise<Outcome[]> {
    const limit = this.deps.busyRetryMs;
    for (let attempt = 1; ; attempt++) {
      await new Promise((r) => setTimeout(r, backoffMs(attempt, { baseMs: 5, maxMs: 100, jitter: 'equal' })));
      try {
        return this.commitBatch(batch);
      } catch (err) {
        if (isBusy(err) && Date.now() - started < limit) continue;
        const error = isBusy(err) ? new StoreBusyError(Date.now() - started, { cause: err }) : this.deps.failStop(err);
        return batch.map(() => ({ ok: false, error }));
      }
    }
  }

  /**
   * One transaction for the batch. Optimistic first: an append refused by its checks (expected version,
   * stream type) wrote nothing, so it needs no savepoint; only when an append fails after it began writing
   * (a projector threw, a duplicate event id) is the batch run again with a savepoint per append.
   */
  private commitBatch(batch: readonly PendingAppend[]): Outcome[] {
    const damaged = this.deps.damaged();
    if (damaged) throw damaged;
    if (batch.length === 1) return this.runBatch(batch, 'none');
    try {
      return this.runBatch(batch, 'optimistic');
    } catch (err) {
      if (!(err instanceof FailedWhileWriting)) throw err;
      return this.runBatch(batch, 'savepoints');
    }
  }

  private runBatch(batch: readonly PendingAppend[], isolation: Isolation): Outcome[] {
    let caughtUp: number | undefined;
    let asyncThrough: number | undefined;
    let followersChecked = false;
    const { overlay } = this.deps.projections;
    let outcomes: Outcome[];
    try {
      outcomes = this.runInTransaction(
        batch,
        isolation,
        (v) => {
          caughtUp = v;
        },
        (p) => {
          asyncThrough = p;
        },
        () => {
          followersChecked = true;
        },
      );
    } finally {
      // Committed or rolled back: nothing held outlives the transaction.
      overlay.end();
    }
    this.chainCommitted = true;
    if (this.deps.onCommit) tellCommit(this.deps.onCommit, 'after', outcomes);
    // Only once committed: a rolled-back transaction also rolled back the catch-up it began with.
    if (caughtUp !== undefined) this.projectionDataVersion = caughtUp;
    if (followersChecked) this.deps.projections.followersChecked = true;
    if (asyncThrough !== undefined) this.deps.async.applied(asyncThrough);
    return outcomes;
  }

  private runInTransaction(
    batch: readonly PendingAppend[],
    isolation: Isolation,
    caughtUpTo: (dataVersion: number | undefined) => void,
    asyncAppliedThrough: (position: number | undefined) => void,
    followersChecked: () => void,
  ): Outcome[] {
    const { stmts } = this.deps;
    const { overlay } = this.deps.projections;
    return this.deps.transaction(() => {
      // Documents written by the batch are held and written once, before the commit (see DocumentOverlay).
      overlay.begin();
      const foreign = this.catchUpForeignWrites();
      caughtUpTo(foreign);
      this.heads.begin(foreign ?? this.projectionDataVersion);
      // The chain's head is what our last commit left, unless another connection committed since (or the
      // last transaction did not commit): then it is read.
      if (foreign !== undefined || !this.chainCommitted) {
        const head = stmts.chainHead.get();
        this.chain = { position: head?.position ?? 0, hex: head?.hash?.toString('hex') ?? GENESIS_HEX };
      }
      this.chainCommitted = false;
      // Which checkpoints follow the head is settled before the appends: none is written in a steady state.
      const { projections } = this.deps;
      if (!projections.followersChecked) {
        projections.followHead(this.chain.position);
        followersChecked();
      }
      const outcomes = batch.map((pending): Outcome => {
        if (isolation === 'none') return { ok: true, value: this.appendInTx(pending.plan) };
        if (isolation === 'optimistic') return this.appendOptimistic(pending.plan);
        stmts.savepoint.run();
        overlay.mark();
        const chain = this.chain;
        try {
          const value = this.appendInTx(pending.plan);
          stmts.release.run();
          return { ok: true, value };
        } catch (error) {
          if (isCorruption(error)) throw error;
          stmts.rollbackTo.run();
          stmts.release.run();
          overlay.rollbackToMark();
          this.chain = chain;
          return { ok: false, error };
        }
      });
      // What earlier commits left to the asynchronous projectors, when due: no commit of its own.
      asyncAppliedThrough(this.deps.async.applyDueInTx());
      overlay.flush();
      if (this.deps.onCommit) tellCommit(this.deps.onCommit, 'before', outcomes);
      return outcomes;
    });
  }

  private appendInTx(plan: AppendPlan): AppendResult {
    const checked = this.checkAppend(plan);
    return 'replayed' in checked ? checked : this.writeAppend(plan, checked.versions);
  }

  /** An append without a savepoint: refused by its checks, it wrote nothing; failing later, the batch is rerun. */
  private appendOptimistic(plan: AppendPlan): Outcome {
    let checked: ReturnType<GroupCommitWriter['checkAppend']>;
    try {
      checked = this.checkAppend(plan);
    } catch (error) {
      if (isCorruption(error)) throw error;
      return { ok: false, error };
    }
    if ('replayed' in checked) return { ok: true, value: checked };
    try {
      return { ok: true, value: this.writeAppend(plan, checked.versions) };
    } catch (error) {
      if (isCorruption(error)) throw error;
      throw new FailedWhileWriting(error);
    }
  }

  /** The replayed result of a known idempotency key, or each stream's version (checked): no writes. */
  private checkAppend(plan: AppendPlan): AppendResult | { versions: number[] } {
    const { stmts, registry } = this.deps;
    const key = plan.idempotencyKey;
    if (key !== undefined && stmts.keyPosition.get(key) !== undefined) {
      const events = stmts.keyEvents.all(key, `${key}\u001f`, `${key}\u0020`).map((r) => decodeRow(registry, r));
      return { events, lastPosition: events[events.length - 1]!.position, replayed: true };
    }
    // Every stream is checked before anything is inserted: a refused append writes nothing.
    const versions = plan.streams.map((stream) => {
      const head = this.heads.head(stream.streamId);
      if (head && head.stream_type !== stream.streamType) {
        throw new StreamTypeMismatchError(stream.streamId, stream.streamType, head.stream_type);
      }
      checkExpectedVersion(stream.streamId, stream.expectedVersion, head?.stream_version ?? 0);
      return head?.stream_version ?? 0;
    });
    return { versions };
  }

  private writeAppend(plan: AppendPlan, versions: readonly number[]): AppendResult {
    const events: RecordedEvent[] = [];
    for (const [i, stream] of plan.streams.entries()) {
      let version = versions[i]!;
      for (const event of stream.events) {
        version++;
        const position = this.insert(plan, stream.streamType, stream.streamId, version, event, events.length);
        events.push(toRecorded(plan, stream, event, position, version));
      }
    }
    this.deps.projections.applyNew(events);
    // Only once the whole append was written: a failure before this leaves the heads as they were.
    for (const [i, stream] of plan.streams.entries()) {
      this.heads.wrote(stream.streamId, versions[i]! + stream.events.length, stream.streamType);
    }
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
      meta: metaJson(event.meta),
      recorded_at: plan.recordedAt,
      idempotency_key: plan.idempotencyKey === undefined ? null : eventIdempotencyKey(plan.idempotencyKey, index),
    };
    const hex = eventHashHex(this.chain.hex, row);
    try {
      insertEventRow(this.deps.stmts.insert, row, Buffer.from(hex, 'hex'));
      this.chain = { position: row.position, hex };
      return row.position;
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && /event_id/.test((err as Error).message)) {
        throw new InvalidAppendError(`event id ${event.eventId} is already recorded`, { cause: err });
      }
      throw err;
    }
  }

  /**
   * When another connection committed since we last looked, brings projectors up to the head first; returns
   * the data version it caught up to (recorded by the caller once the transaction commits).
   */
  private catchUpForeignWrites(): number | undefined {
    const version = this.deps.stmts.dataVersion.get()!;
    if (version === this.projectionDataVersion) return undefined;
    // Another writer may have changed who follows the head: the rows are read again in this transaction.
    this.deps.projections.followersChecked = false;
    while (!this.deps.projections.catchUp(this.deps.projections.inline, 1000).done) {
      // each pass applies one batch; the transaction holds the write lock, so the head cannot move
    }
    return version;
  }
}
