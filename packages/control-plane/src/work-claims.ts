import { type Clock, type IdGenerator, isoTime, type NewEvent } from '@demiurge/contracts';
import {
  type AppendOptions,
  type AppendStream,
  type EventStore,
  StreamVersionConflictError,
  streamAppend,
} from '@demiurge/event-store';
import { checkEvents, type WorkEventType, workLifecycle } from '@demiurge/lifecycle';
import { type WorkItemsReader, workItemsReader } from '@demiurge/projector-work-items';
import type { KindRegistry } from './kinds.js';
import { afterAppend, isLeased, loadWork, payloadProblem, type WorkAggregate, workFromView } from './work-aggregate.js';

/** A live claim: present its token on every later write of the item. */
export interface WorkClaim {
  readonly workId: string;
  readonly kind: string;
  readonly subjectId: string;
  readonly payload: unknown;
  readonly claimToken: string;
  readonly attempt: number;
  readonly owner: string;
  readonly leaseUntil: string;
}

/** What claiming needs from the durable-work runtime. */
export interface ClaimContext {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly owner: string;
  readonly kinds: KindRegistry;
  readonly appendOptions: AppendOptions;
  /** Told each claim made and the item as that claim left it (the runtime decides the claim's next command from it). */
  readonly claimed?: (claim: WorkClaim, item: WorkAggregate) => void;
  /** Told how many items a `claimDue` call lost to other claimers (their append found the item moved). */
  readonly onRacesLost?: (lost: number) => void;
}

/** A claim decided from an item's stream: the claim and its events, or why not (maybe with events: corrupt). */
export type ClaimDecision = { claim: WorkClaim; stream: AppendStream } | { refused: string; stream?: AppendStream };

const WORK = workLifecycle.streamType;
const iso = isoTime;
/** Rounds of one `claimDue` call: a round that lost items to other claimers looks for more. */
const MAX_ROUNDS = 4;

/**
 * Work ids a `claimDue` call of this process is claiming right now, per store: concurrent claimers pick
 * different items, so their claims commit together in one group commit instead of conflicting.
 */
const inFlight = new WeakMap<EventStore, Set<string>>();

const readers = new WeakMap<EventStore, WorkItemsReader>();

/** The store's work-items reader, made once (every claim reads through it). */
export function readerOf(store: EventStore): WorkItemsReader {
  let reader = readers.get(store);
  if (!reader) {
    reader = workItemsReader(store);
    readers.set(store, reader);
  }
  return reader;
}

function reservationsOf(store: EventStore): Set<string> {
  let set = inFlight.get(store);
  if (!set) {
    set = new Set();
    inFlight.set(store, set);
  }
  return set;
}

/**
 * Decides a claim of `item` at `now`: a fresh token and attempt + 1 (after `work.lease_expired` for an
 * expired lease), `work.corrupt` for an unreadable payload, or a refusal.
 */
export function decideClaim(ctx: ClaimContext, item: WorkAggregate, now: number, leaseMs: number): ClaimDecision {
  const workId = item.streamId;
  if (item.state === 'none') return { refused: 'no such work item' };
  const at = iso(now);
  const expired = isLeased(item.state) && item.state !== 'sending' && item.leaseUntil !== null && item.leaseUntil < at;
  const events: NewEvent<WorkEventType>[] = [];
  if (expired) {
    events.push({ type: 'work.lease_expired', data: { workId, claimToken: item.claimToken!, attempt: item.attempt } });
  } else if (item.state !== 'queued' && item.state !== 'retry_scheduled') {
    return { refused: `it is ${item.state}` };
  } else if (item.dueAt !== null && item.dueAt > at) {
    return { refused: `it is not due until ${item.dueAt}` };
  }
  const problem = payloadProblem(ctx.kinds, item);
  if (problem) {
    events.push({ type: 'work.corrupt', data: { workId, detail: problem } });
    return {
      refused: `corrupt: ${problem}`,
      stream: streamAppend(WORK, item, checkEvents(workLifecycle, item.state, events, workId)),
    };
  }
  const claim: WorkClaim = {
    workId,
    kind: item.kind!,
    subjectId: item.subjectId!,
    payload: item.payload,
    claimToken: ctx.ids.next('clm'),
    attempt: item.attempt + 1,
    owner: ctx.owner,
    leaseUntil: iso(now + leaseMs),
  };
  const { claimToken, attempt, owner, leaseUntil } = claim;
  events.push({ type: 'work.claimed', data: { workId, claimToken, attempt, owner, leaseUntil } });
  return { claim, stream: streamAppend(WORK, item, checkEvents(workLifecycle, item.state, events, workId)) };
}

/** Due work ids, and whether more lie beyond the listed ones. */
interface DueCandidates {
  readonly ids: readonly string[];
  readonly more: boolean;
}

/**
 * Due items, oldest first (queued or retry_scheduled and due, then leased with an expired lease); `more`
 * when a list was cut at `limit` while still in its due part. When the due list alone fills `limit`, the leases
 * are not listed: expired leases come after every listed due item, so no claimer of this listing would reach
 * them before it re-lists (`more`), and a busy queue's claims save a read each.
 */
async function dueCandidates(
  store: EventStore,
  options: { kind?: string | undefined; limit: number },
  now: string,
): Promise<DueCandidates> {
  const reader = readerOf(store);
  const kind = options.kind;
  const waiting = await reader.waiting({ kind, limit: options.limit });
  const last = <T>(list: readonly T[]) => list[list.length - 1];
  // More lie beyond only when a list was cut while its entries were still due (both lists are in due order).
  const lastDue = last(waiting.entries);
  const waitingCut = waiting.cut && lastDue !== undefined && lastDue.dueAt <= now;
  const leased = waitingCut ? undefined : await reader.leased({ kind, limit: options.limit });
  const ids: string[] = [];
  for (const entry of waiting.entries) if (entry.dueAt <= now) ids.push(entry.workId);
  for (const lease of leased?.entries ?? []) {
    if (lease.leaseUntil >= now) break;
    if (lease.status !== 'sending') ids.push(lease.workId);
  }
  const lastLease = leased && last(leased.entries);
  const leasedCut = leased?.cut === true && lastLease !== undefined && lastLease.leaseUntil < now;
  return { ids, more: waitingCut || leasedCut };
}

/** A candidate listing concurrent claimers of this process share, per store and kind. */
interface Listing {
  /** How many entries it reads; grows while it has not started. */
  limit: number;
  started: boolean;
  readonly listing: Promise<DueCandidates>;
}

const listings = new WeakMap<EventStore, Map<string, Listing>>();

/**
 * {@link dueCandidates}, shared by the concurrent claimers of this process: claimers that ask in the same turn
 * (eight workers resuming from one commit) join a listing read a microtask later, each growing it by twice
 * what it wants; claimers that ask while it is in flight (a PostgreSQL round trip) join it when it reads at
 * least as many as they need. Eight workers polling one queue read it once, not eight times. What it lists was
 * due when it started; a claim decided from it is checked against the item's stream as always.
 */
function sharedDueCandidates(
  store: EventStore,
  options: { kind?: string | undefined; limit: number; want: number },
  now: string,
): Promise<DueCandidates> {
  let byKind = listings.get(store);
  if (!byKind) {
    byKind = new Map();
    listings.set(store, byKind);
  }
  const key = options.kind ?? '';
  const current = byKind.get(key);
  if (current && !current.started) {
    current.limit = Math.max(current.limit, options.limit) + 2 * options.want;
    return current.listing;
  }
  if (current && current.limit >= options.limit) return current.listing;
  const entry: Listing = {
    limit: options.limit,
    started: false,
    listing: Promise.resolve().then(() => {
      entry.started = true;
      return dueCandidates(store, { kind: options.kind, limit: entry.limit }, now);
    }),
  };
  byKind.set(key, entry);
  const done = () => {
    if (byKind.get(key) === entry) byKind.delete(key);
  };
  entry.listing.then(done, done);
  return entry.listing;
}

/**
 * Whether any item is due (of `kind` when given) as the read model says outside any lock: a read, shared by the
 * concurrent callers of this process. What the claims under the PostgreSQL store's lock look at first when their
 * last call found nothing, so that an idle host's polls never take the log-head lock.
 */
export async function anyDue(store: EventStore, kind: string | undefined, now: string): Promise<boolean> {
  const listed = await sharedDueCandidates(store, { kind, limit: 4, want: 1 }, now);
  return listed.ids.length > 0 || listed.more;
}

/**
 * Reserves up to `want` due items no concurrent claimer of this process holds and this call has not
 * refused (in `reserved`, synchronously after reading the list, so concurrent callers pick different ones).
 */
async function reserveCandidates(
  store: EventStore,
  options: { kind?: string | undefined; want: number },
  now: string,
  reserved: Set<string>,
  skipped: ReadonlySet<string>,
): Promise<string[]> {
  // Enough to skip what concurrent claimers hold without a second look in the usual case.
  for (let limit = options.want * 2 + 2 + reserved.size; ; limit *= 2) {
    const listed = await sharedDueCandidates(store, { kind: options.kind, limit, want: options.want }, now);
    const picked = [...new Set(listed.ids)]
      .filter((id) => !reserved.has(id) && !skipped.has(id))
      .slice(0, options.want);
    if (picked.length === options.want || !listed.more) {
      for (const id of picked) reserved.add(id);
      return picked;
    }
  }
}

/**
 * A listed candidate as the work-items read model holds it, at the stream version it last applied: what
 * {@link loadWork} would read, without reading and decoding the item's stream (the read model is written in the
 * append's transaction, so it is as current as the list it came from). It is only where a claim is decided from:
 * the append expects that version, so an item anyone wrote since (another process, or an event the read model
 * did not apply) is a version conflict, and the next round decides that item from its stream. Items the read
 * model does not hold (a store without it, which cannot list them either) are read from their stream.
 */
async function loadCandidate(
  store: EventStore,
  workId: string,
  fromStream: ReadonlySet<string>,
): Promise<{ item: WorkAggregate; fromView: boolean }> {
  if (fromStream.has(workId)) return { item: await loadWork(store, workId), fromView: false };
  const view = await readerOf(store).get(workId);
  if (view === undefined) return { item: await loadWork(store, workId), fromView: false };
  return { item: workFromView(view, view.version), fromView: true };
}

/**
 * Claims up to `limit` due items in one commit: every claim is decided from its item (its read model, or its
 * stream after a conflict: {@link loadCandidate}) with its own token, attempt and expected version (the
 * fencing), and all of them are appended at once, so they share one transaction of the store's group commit
 * (and concurrent callers' claims join it too). An item another claimer took first is a version conflict that
 * skips it; the call then looks for more, a few rounds at most.
 */
export async function claimDue(
  ctx: ClaimContext,
  options: { kind?: string | undefined; limit: number; leaseMs: number },
): Promise<WorkClaim[]> {
  const reserved = reservationsOf(ctx.store);
  const skipped = new Set<string>();
  /** Items whose read-model decision met a version conflict: decided from their stream from then on. */
  const fromStream = new Set<string>();
  const claims: WorkClaim[] = [];
  let lost = 0;
  for (let round = 0; round < MAX_ROUNDS && claims.length < options.limit; round++) {
    const now = ctx.clock.now();
    const want = options.limit - claims.length;
    const picked = await reserveCandidates(ctx.store, { kind: options.kind, want }, iso(now), reserved, skipped);
    if (picked.length === 0) break;
    let retry = false;
    try {
      const loaded = await Promise.all(picked.map((id) => loadCandidate(ctx.store, id, fromStream)));
      const items = loaded.map((l) => l.item);
      const decisions = items.map((item) => decideClaim(ctx, item, now, options.leaseMs));
      // Issued in one synchronous loop: the appends are queued together and commit in one transaction.
      const appends = decisions.map((d) => (d.stream ? ctx.store.append(d.stream, ctx.appendOptions) : undefined));
      const settled = await Promise.allSettled(appends);
      let failure: { error: unknown } | undefined;
      settled.forEach((outcome, i) => {
        const decision = decisions[i]!;
        if (outcome.status === 'rejected') {
          if (outcome.reason instanceof StreamVersionConflictError) {
            retry = true;
            lost++;
            if (loaded[i]!.fromView) fromStream.add(picked[i]!);
          } else failure ??= { error: outcome.reason };
        } else if ('claim' in decision) {
          claims.push(decision.claim);
          ctx.claimed?.(decision.claim, afterAppend(items[i]!, outcome.value?.events ?? []));
        } else {
          skipped.add(picked[i]!);
          retry = true;
        }
      });
      if (failure) throw failure.error;
    } finally {
      for (const id of picked) reserved.delete(id);
    }
    if (!retry) break;
  }
  if (lost > 0) ctx.onRacesLost?.(lost);
  return claims;
}
