import {
  type EventStore,
  type LockedEntry,
  type LockedListing,
  StreamVersionConflictError,
} from '@demiurge/event-store';
import {
  OperatorStatusCollections,
  operatorItemKey,
  operatorStatusProjector,
} from '@demiurge/projector-operator-status';
import {
  type ClaimableEntry,
  type LeaseEntry,
  leasedPrefix,
  mergeQueueListings,
  type QueueEntry,
  WorkItemCollections,
  type WorkItemView,
  waitingPrefix,
  workItemsProjector,
} from '@demiurge/projector-work-items';
import { afterAppend, type WorkAggregate, workFromView } from './work-aggregate.js';
import { anyDue, type ClaimContext, decideClaim, readerOf, type WorkClaim } from './work-claims.js';

const iso = (ms: number) => new Date(ms).toISOString();
/** Rounds of one call: a round that found fewer due items than it wants while a list was cut looks further. */
const MAX_ROUNDS = 4;
const PROJECTOR = workItemsProjector.name;

/**
 * The kinds ('' for all) whose last claim under the lock found nothing, per store: the next call looks at the read
 * model first (a read, no lock) and takes the lock only when something is due. A host's idle polls stay reads.
 */
const idle = new WeakMap<EventStore, Set<string>>();

/** Whether `claimDue` can decide its claims under the store's write lock (the PostgreSQL store can). */
export const claimsUnderLock = (ctx: ClaimContext): boolean =>
  ctx.store.appendDecided !== undefined && ctx.store.projectorNames.includes(PROJECTOR);

/**
 * The listings a claim decides from: per kind (the one asked, or every kind the queue held just before), its
 * waiting entries then its leases, each with its item.
 */
function listings(kinds: readonly string[], limit: number): LockedListing[] {
  // The claim's projectors read the item's operator view too: read with it under the lock, it costs no load.
  const alsoRead = [
    {
      projector: operatorStatusProjector.name,
      collection: OperatorStatusCollections.items,
      idPrefix: operatorItemKey('work', ''),
    },
  ];
  const item = { streamField: 'workId', joinCollection: WorkItemCollections.items, alsoRead };
  const collection = WorkItemCollections.queue;
  return kinds.flatMap((kind) => [
    { projector: PROJECTOR, collection, prefix: waitingPrefix(kind), limit, ...item },
    { projector: PROJECTOR, collection, prefix: leasedPrefix(kind), limit, ...item },
  ]);
}

/**
 * `claimDue` on a store that decides appends under its write lock ({@link EventStore.appendDecided}): the due
 * list, the expired leases and the items are read in the statement that takes the PostgreSQL store's log-head
 * lock, and the claims are decided there, oldest first, each from its item's read model (current under the
 * lock) at its stream's head version, with a fresh token and attempt + 1 as always. Concurrent claimers (other
 * hosts, other callers in the same group commit, which skip what earlier ones in it took) never decide on a
 * stale list, so they never race for an item: a lost race is only a version conflict that should not happen.
 * After a call that found nothing, the next one first reads whether anything is due (outside the lock), so the
 * polls of an idle host do not queue on the lock that every host's appends take.
 */
export async function claimDueUnderLock(
  ctx: ClaimContext,
  options: { kind?: string | undefined; limit: number; leaseMs: number },
): Promise<WorkClaim[]> {
  const append = ctx.store.appendDecided!.bind(ctx.store);
  let idleKinds = idle.get(ctx.store);
  if (!idleKinds) {
    idleKinds = new Set();
    idle.set(ctx.store, idleKinds);
  }
  const kindKey = options.kind ?? '';
  if (idleKinds.has(kindKey) && !(await anyDue(ctx.store, options.kind, iso(ctx.clock.now())))) return [];
  // Every kind's queue is listed when no kind is asked: the kinds are read first, outside the lock (a kind whose
  // first item is enqueued in between is listed by the next call).
  const kinds = options.kind === undefined ? await readerOf(ctx.store).kinds() : [options.kind];
  const claims: WorkClaim[] = [];
  let lost = 0;
  for (
    let round = 0, scale = 1;
    kinds.length > 0 && round < MAX_ROUNDS && claims.length < options.limit;
    round++, scale *= 2
  ) {
    const want = options.limit - claims.length;
    // Exactly what it wants: under the lock the lists are current (nobody else takes an entry in between), the
    // deciders of one transaction read one merged list with the sum of their limits (each skips what the ones
    // before it took), and an entry that cannot be claimed after all makes `more` look further in the next round.
    // (Two spare entries per claimer cost the eight-worker bench a third of its locking statement's time.)
    const limit = want * scale;
    let more = false;
    try {
      const { result, appended } = await append({
        listings: listings(kinds, limit),
        options: ctx.appendOptions,
        decide: (listed, taken) => {
          const now = ctx.clock.now();
          const at = iso(now);
          const due = dueEntries(listed, limit, at);
          more = due.more;
          const streams = [];
          const made: { claim: WorkClaim; item: WorkAggregate }[] = [];
          const seen = new Set<string>();
          for (const entry of due.entries) {
            if (made.length >= want) break;
            const id = entry.streamId;
            if (id === undefined || taken.has(id) || seen.has(id) || entry.joined === undefined) continue;
            seen.add(id);
            const item = workFromView(entry.joined as WorkItemView, entry.streamVersion ?? 0);
            const decision = decideClaim(ctx, item, now, options.leaseMs);
            if (decision.stream) streams.push(decision.stream);
            if ('claim' in decision) made.push({ claim: decision.claim, item });
          }
          return { streams, result: made };
        },
      });
      for (const { claim, item } of result) {
        claims.push(claim);
        ctx.claimed?.(claim, afterAppend(item, appended?.events ?? []));
      }
      if (result.length < want && !more) break;
    } catch (err) {
      // Not expected under the lock; counted as a lost race and tried again, as the listing path does.
      if (!(err instanceof StreamVersionConflictError)) throw err;
      lost++;
    }
  }
  if (lost > 0) ctx.onRacesLost?.(lost);
  if (claims.length === 0) idleKinds.add(kindKey);
  else idleKinds.delete(kindKey);
  return claims;
}

/** A listed entry with its `queue` document in reach of the merge. */
type Listed<T extends QueueEntry> = T & { readonly locked: LockedEntry };

/**
 * The due entries, oldest first (queued or retry_scheduled and due, then leased with an expired lease, never
 * `sending`), and whether more lie beyond (a list was cut while its entries were still due). `listed` holds,
 * per kind, its waiting list then its lease list; several kinds are merged in order.
 */
function dueEntries(
  listed: readonly (readonly LockedEntry[])[],
  limit: number,
  at: string,
): { entries: LockedEntry[]; more: boolean } {
  const waitingLists: Listed<ClaimableEntry>[][] = [];
  const leaseLists: Listed<LeaseEntry>[][] = [];
  listed.forEach((list, i) => {
    const docs = list.map((locked) => ({ ...(locked.doc as QueueEntry), locked }));
    if (i % 2 === 0) waitingLists.push(docs as Listed<ClaimableEntry>[]);
    else leaseLists.push(docs as Listed<LeaseEntry>[]);
  });
  const waiting = mergeQueueListings(waitingLists, limit);
  const leases = mergeQueueListings(leaseLists, limit);
  const entries: LockedEntry[] = [];
  for (const entry of waiting.entries) {
    if (entry.dueAt > at) break;
    entries.push(entry.locked);
  }
  const waitingCut = waiting.cut && entries.length === waiting.entries.length && entries.length > 0;
  let expired = 0;
  for (const lease of leases.entries) {
    if (lease.leaseUntil >= at) break;
    expired++;
    if (lease.status !== 'sending') entries.push(lease.locked);
  }
  const leasesCut = leases.cut && expired === leases.entries.length && expired > 0;
  return { entries, more: waitingCut || leasesCut };
}
