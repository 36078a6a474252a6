import type { EventRegistry, RecordedEvent } from '@demiurge/contracts';
import {
  type AppendOptions,
  type AppendResult,
  type AppendStream,
  type DecidedAppend,
  type DecidedAppendResult,
  InvalidAppendError,
  type Projector,
  StreamTypeMismatchError,
} from '@demiurge/event-store';
import { type AppendPlan, checkExpectedVersion, eventIdempotencyKey, toRecorded } from '@demiurge/event-store/adapter';
import { sql } from 'kysely';
import type { CacheStamp, DocumentCache, StreamHead } from './document-cache.js';
import { decodeRow, EVENT_COLUMNS, type EventRow } from './event-rows.js';
import { type ChainedRow, eventHash } from './hash-chain.js';
import { type AppendStart, lockForAppend, lockHead } from './head-lock.js';
import { type Listed, mergeListings, readListings } from './locked-listings.js';
import type { PipelinedTransaction } from './pipelined-transaction.js';
import { type DocumentWrites, NeedsLock, type ProjectorRunner, type SeenDocuments } from './projector-runner.js';
import { writeStatement } from './write-statement.js';

/** The store's document cache, and what this transaction leaves for it once it commits. */
export interface AppendCache {
  readonly documents: DocumentCache;
  /** Set when the transaction wrote: the stamp its commit leaves and the documents its projectors saw. */
  committed?: { stamp: CacheStamp; seen: SeenDocuments; heads: ReadonlyMap<string, StreamHead> };
}

/** An append decided under the lock ({@link DecidedAppend}), and how its streams are planned (validated). */
export interface DecidingEntry {
  readonly decided: DecidedAppend<unknown>;
  readonly plan: (streams: readonly AppendStream[], options: AppendOptions | undefined) => AppendPlan;
}

/** What a group commit carries: planned appends and appends decided under the lock. */
export type GroupEntry = AppendPlan | DecidingEntry;

/** Each entry's outcome: its result, or the error it is refused with. */
export type GroupOutcome = AppendResult | DecidedAppendResult<unknown> | Error;

const isDeciding = (e: GroupEntry): e is DecidingEntry => 'decided' in e;

/**
 * Appends inside one transaction: lock the head, replay an idempotency key (an append with a key runs alone),
 * check stream types and expected versions, insert the events with their hashes, apply the projectors (caught
 * up first when another host left them behind), move the head and NOTIFY (delivered at commit).
 *
 * Several appends of this host share the transaction (a group commit): each is checked in order against the
 * stream heads as the earlier ones left them, and one that is refused (a version conflict, a stream type
 * mismatch) gets its error back without changing anything; the others' events share the one insert, the one
 * write of documents and the one commit. Each result is the append's result or its refusal.
 *
 * A decided append reads its listings in the locking statement and decides, in its turn, from them and from the
 * streams the appends before it in the transaction write; its streams are then checked and appended like any
 * other's (their heads read with the listings).
 *
 * With `fromCache` ({@link startFromCache}) nothing is read first: the transaction is `BEGIN`, the guarded write
 * statement and `COMMIT` in one round trip. It resolves to undefined when that cannot hold (a projector needs a
 * document the cache lacks, a refusal found from cached heads, or the statement found another writer since and
 * wrote nothing): then nothing was committed, and the caller runs the appends again without `fromCache`.
 */
export async function appendInTransaction(
  t: PipelinedTransaction,
  entries: readonly GroupEntry[],
  registry: EventRegistry,
  runner: ProjectorRunner,
  projectors: readonly Projector[],
  cache?: AppendCache,
  fromCache?: AppendStart & { stamp: CacheStamp },
): Promise<GroupOutcome[] | undefined> {
  const known = cache && projectors.length > 0 ? cache.documents : undefined;
  // One round trip (with BEGIN): the lock, the streams' heads, the lowest checkpoint of this store's projectors.
  // Planned from the cache (`fromCache`), nothing is read: the one statement checks under the lock what it assumed.
  const { tx } = t;
  const plans = entries.filter((e): e is AppendPlan => !isDeciding(e));
  const deciding = entries.filter(isDeciding);
  const merged = mergeListings(deciding.map((d) => d.decided));
  const start =
    fromCache ??
    (await lockForAppend(
      t,
      [...new Set(plans.flatMap((p) => p.streams.map((s) => s.streamId)))],
      projectors.map((p) => p.name),
      merged.listings,
    ));
  const { head } = start;
  if (!fromCache) known?.validate(head.position, start.writer);
  const key = entries.length === 1 ? plans[0]?.idempotencyKey : undefined;
  if (entries.length > 1 && plans.some((p) => p.idempotencyKey !== undefined)) {
    throw new Error('an append with an idempotency key runs in a transaction of its own');
  }
  if (key !== undefined) {
    const { rows } = await sql<EventRow>`SELECT ${sql.raw(EVENT_COLUMNS)} FROM events
      WHERE idempotency_key = ${key} OR (idempotency_key > ${`${key}\u001f`} AND idempotency_key < ${`${key}\u0020`})
      ORDER BY position`.execute(tx);
    if (rows.length > 0) {
      const events = rows.map((r) => decodeRow(registry, r));
      return [{ events, lastPosition: events[events.length - 1]!.position, replayed: true }];
    }
  }
  let caughtUp = false;
  if (projectors.length > 0 && (start.lowest ?? 0) < head.position) {
    known?.clear();
    caughtUp = true;
    // A rebuild, or a host without these projectors, left them behind: catch them up before applying on them.
    while (!(await runner.catchUp(tx, projectors, head.position, 1000)).done) {
      // one batch per pass; the lock holds the head still
    }
  }
  // The listings as of the lock, or, after a catch-up moved the documents, as of now.
  const listed = caughtUp && deciding.length > 0 ? await readListings(tx, merged.listings) : start.listed;
  const heads = new Map(start.streams);
  for (const entry of listed.flat()) {
    if (entry.streamId !== undefined && entry.streamType !== undefined && !heads.has(entry.streamId)) {
      heads.set(entry.streamId, { type: entry.streamType, version: entry.streamVersion ?? 0 });
    }
  }
  const events: RecordedEvent[] = [];
  const rows: (ChainedRow & { hash: Buffer })[] = [];
  const results: GroupOutcome[] = [];
  /** The streams written by the appends so far: a decision skips them (its listings predate those writes). */
  const taken = new Set<string>();
  let previous = head.hash;
  let decidedSoFar = 0;
  for (const entry of entries) {
    let plan: AppendPlan;
    let decision: { result: unknown } | undefined;
    if (isDeciding(entry)) {
      const slots = merged.slots[decidedSoFar++]!;
      try {
        const ownListings: Listed[][] = slots.map((i) => listed[i]!);
        const { streams, result } = entry.decided.decide(ownListings, taken);
        if (streams.length === 0) {
          results.push({ result, appended: undefined });
          continue;
        }
        plan = entry.plan(streams, entry.decided.options);
        decision = { result };
      } catch (err) {
        results.push(err as Error);
        continue;
      }
    } else plan = entry;
    try {
      for (const stream of plan.streams) {
        const current = heads.get(stream.streamId);
        if (current && current.type !== stream.streamType) {
          throw new StreamTypeMismatchError(stream.streamId, stream.streamType, current.type);
        }
        checkExpectedVersion(stream.streamId, stream.expectedVersion, current?.version ?? 0);
      }
    } catch (err) {
      // Planned from the cache, a refusal is not final: the heads it assumed are checked only at the write.
      if (fromCache) return undefined;
      if (entries.length === 1 && !decision) throw err;
      results.push(err as Error);
      continue;
    }
    const mine: RecordedEvent[] = [];
    for (const stream of plan.streams) {
      let version = heads.get(stream.streamId)?.version ?? 0;
      for (const event of stream.events) {
        version++;
        const row: ChainedRow = {
          position: head.position + rows.length + 1,
          event_id: event.eventId,
          stream_type: stream.streamType,
          stream_id: stream.streamId,
          stream_version: version,
          type: event.type,
          schema_version: event.schemaVersion,
          data: JSON.stringify(event.data),
          meta: JSON.stringify(event.meta),
          recorded_at: plan.recordedAt,
          idempotency_key: key === undefined ? null : eventIdempotencyKey(key, mine.length),
        };
        previous = eventHash(previous, row);
        rows.push({ ...row, hash: previous });
        mine.push(toRecorded(plan, stream, event, row.position, version));
      }
      heads.set(stream.streamId, { type: stream.streamType, version });
      taken.add(stream.streamId);
    }
    events.push(...mine);
    const appended = { events: mine, lastPosition: mine[mine.length - 1]?.position ?? head.position, replayed: false };
    results.push(decision ? { result: decision.result, appended } : appended);
  }
  if (rows.length === 0) {
    // Nothing appended; a catch-up wrote documents, so it leaves its mark on the head row as every writer does.
    if (caughtUp) await lockHead(tx, { touch: true });
    return results;
  }
  const lastPosition = head.position + rows.length;
  const seen: SeenDocuments = { documents: [], complete: true };
  let writes: DocumentWrites = { put: { p: [], c: [], i: [], d: [] }, gone: { p: [], c: [], i: [] } };
  try {
    if (projectors.length > 0) {
      // What the listings read with their entries (the items, their other views) is as of the lock: no load.
      const preloaded = listed.flatMap((l) => l.flatMap((e) => e.read ?? []));
      writes = await runner.applyCollect(
        tx,
        events,
        projectors,
        known && { known, seen, noLoads: !!fromCache },
        preloaded,
      );
    }
  } catch (err) {
    // Planned from the cache, a projector needs a document it does not hold (or failed, on documents the lock has
    // not confirmed): nothing was sent; the caller takes the lock.
    if (fromCache || err instanceof NeedsLock) return undefined;
    throw err;
  }
  // One statement: the events, the documents, the head, the checkpoints and the NOTIFY ({@link writeStatement}).
  try {
    const last = { position: lastPosition, hash: previous };
    const statement = writeStatement(tx, rows, writes, projectors, last, fromCache?.stamp);
    const done = fromCache ? await t.alone(statement) : await t.commit(statement);
    // Planned from the cache, and someone else wrote since: nothing was written, the cache is stale; the caller
    // takes the lock.
    if (done.length === 0) {
      known?.clear();
      return undefined;
    }
    if (known && cache) {
      cache.committed = { stamp: { position: lastPosition, xid: done[0]!.xid, hash: previous }, seen, heads };
    }
  } catch (err) {
    const e = err as { code?: string; constraint?: string; detail?: string };
    if (e.code === '23505' && e.constraint === 'events_event_id_key') {
      // detail: Key (event_id)=(evt_x) already exists.
      const dup = rows.find((r) => e.detail?.includes(`=(${r.event_id})`))?.event_id;
      const what = dup === undefined ? 'an event id of this append' : `event id ${dup}`;
      throw new InvalidAppendError(`${what} is already recorded`, { cause: err });
    }
    throw err;
  }
  return results;
}
