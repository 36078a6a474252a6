import type { EventData, WorkEnqueued } from '@demiurge/contracts';
import type { WorkEventType, WorkState } from '@demiurge/lifecycle';

/** A work item's status: any state of the work machine except the pre-creation `none`. */
export type WorkItemStatus = Exclude<WorkState, 'none'>;

/** A failure as the work events carry it. */
export interface WorkError {
  readonly code: string;
  readonly message: string;
}

/**
 * One row of `runtime_work_items`: the durable lease surface of a piece of host work.
 * Times are `Date#toISOString()` strings, so they sort lexicographically in time order.
 */
export interface WorkItemView {
  readonly workId: string;
  readonly kind: string;
  readonly subjectId: string;
  readonly status: WorkItemStatus;
  /** How many times it was claimed (`work.claimed` events). */
  readonly attempts: number;
  /** The fencing token of the current claim; null unless claimed, running or sending. */
  readonly claimToken: string | null;
  /** The current claim's owner; same lifetime as `claimToken`. */
  readonly owner: string | null;
  /** When the current claim's lease ends (from `work.claimed`/`work.heartbeat`); null unless leased. */
  readonly leaseUntil: string | null;
  /**
   * When the next attempt may start: `notBefore` of `work.enqueued`, `retryAt` of `work.failed` or of a
   * `retry` `work.resolved`. Null unless the item waits for a claim (`queued`/`retry_scheduled`).
   */
  readonly nextAttemptAt: string | null;
  /** When it may be claimed: `nextAttemptAt ?? enqueuedAt`. */
  readonly dueAt: string;
  /** The last `work.failed` error (a `work.corrupt` is `{ code: 'corrupt', message: detail }`); kept after success. */
  readonly lastError: WorkError | null;
  /** `work.succeeded.externalRef`: the effect outside (a message id...). */
  readonly externalRef: string | null;
  readonly payload: Exclude<EventData<typeof WorkEnqueued>['payload'], undefined> | null;
  readonly enqueuedAt: string;
  readonly updatedAt: string;
  /** The stream version of the last event applied. */
  readonly version: number;
  /** `allowedEvents(workLifecycle, status)`: what the machine accepts now. */
  readonly allowed: readonly WorkEventType[];
}

/** A `queue` entry of an item waiting for a claim (`queued` or `retry_scheduled`). */
export interface ClaimableEntry {
  readonly workId: string;
  readonly kind: string;
  readonly dueAt: string;
}

/** A `queue` entry of an item held by a claim (`claimed`, `running` or `sending`). */
export interface LeaseEntry {
  readonly workId: string;
  readonly kind: string;
  readonly status: WorkItemStatus;
  readonly leaseUntil: string;
}

/** An entry of `queue`: waiting ({@link ClaimableEntry}, has `dueAt`) or leased ({@link LeaseEntry}). */
export type QueueEntry = ClaimableEntry | LeaseEntry;

/** Collections of the `work-items` projector. */
export const WorkItemCollections = {
  /** id = workId → {@link WorkItemView} */
  items: 'items',
  /**
   * One index for claiming, per kind: id = {@link leasedKey} → {@link LeaseEntry} while claimed, running or
   * sending, id = {@link waitingKey} → {@link ClaimableEntry} while queued or retry_scheduled. A kind's leases sort
   * just before its waiting items, so a claim (the oldest waiting entry out, a lease entry in) and its success
   * (the lease entry out) write the same page of the file.
   */
  queue: 'queue',
} as const;

/** The statuses in which an item waits for a claim (has a waiting entry in `queue`). */
export const CLAIMABLE_STATUSES: readonly WorkItemStatus[] = ['queued', 'retry_scheduled'];
/** The statuses in which an item is held by a claim (has a lease entry in `queue`). */
export const LEASED_STATUSES: readonly WorkItemStatus[] = ['claimed', 'running', 'sending'];

/** Whether an item in this status waits for a claim. */
export const isClaimable = (status: WorkItemStatus): boolean => CLAIMABLE_STATUSES.includes(status);
/** Whether an item in this status is held by a claim. */
export const isLeased = (status: WorkItemStatus): boolean => LEASED_STATUSES.includes(status);

/** Whether a `queue` entry is a waiting one (else a lease). */
export const isWaitingEntry = (entry: QueueEntry): entry is ClaimableEntry => 'dueAt' in entry;

/**
 * The prefix of one kind's entries in `queue`: the kind, escaped so that it holds no `/` (so one kind's
 * entries are one range, whatever the kinds are called; the usual dotted kinds are unchanged).
 */
export const queueKindPrefix = (kind: string): string => `${encodeURIComponent(kind)}/`;

/** The prefix of one kind's lease entries in `queue` (by lease end: the first are the first to expire). */
export const leasedPrefix = (kind: string): string => `${queueKindPrefix(kind)}lease/`;

/** The prefix of one kind's waiting entries in `queue` (by due time: the first are the first due). */
export const waitingPrefix = (kind: string): string => `${queueKindPrefix(kind)}wait/`;

/**
 * The id of a waiting entry in `queue`: kind, due time, work id.
 * @example
 * const due = await reader.list<ClaimableEntry>(WorkItemCollections.queue, { prefix: waitingPrefix('delivery.send'), limit: 20 });
 */
export const waitingKey = (kind: string, dueAt: string, workId: string): string =>
  `${waitingPrefix(kind)}${dueAt}/${workId}`;

/**
 * The id of a lease entry in `queue`: kind, lease end, work id.
 * @example
 * const expiring = await reader.list<LeaseEntry>(WorkItemCollections.queue, { prefix: leasedPrefix('delivery.send'), limit: 50 });
 */
export const leasedKey = (kind: string, leaseUntil: string, workId: string): string =>
  `${leasedPrefix(kind)}${leaseUntil}/${workId}`;

/** An ordered listing of `queue` entries: `cut` when more may lie beyond the last. */
export interface QueueListing<T extends QueueEntry> {
  readonly entries: readonly T[];
  readonly cut: boolean;
}

/** The order of entries of one sort (waiting: due time then work id; leased: lease end then work id). */
const orderOf = (entry: QueueEntry): string =>
  `${isWaitingEntry(entry) ? entry.dueAt : entry.leaseUntil}/${entry.workId}`;

/**
 * Merges per-kind listings of one sort (each in order, each read with `limit`) into one in that order. A list
 * that holds `limit` entries or more says nothing past its last entry, so the merge keeps only the entries up
 * to the earliest such last entry (at least `limit` of them) and is then `cut`. One list is kept as it is.
 * @example
 * const due = mergeQueueListings(await Promise.all(kinds.map((k) => listWaiting(k, 10))), 10);
 */
export function mergeQueueListings<T extends QueueEntry>(
  lists: readonly (readonly T[])[],
  limit: number,
): QueueListing<T> {
  if (lists.length === 1) return { entries: lists[0]!, cut: lists[0]!.length >= limit };
  let bound: string | undefined;
  for (const list of lists) {
    const last = list[list.length - 1];
    if (list.length >= limit && last !== undefined && (bound === undefined || orderOf(last) < bound))
      bound = orderOf(last);
  }
  const keyed = lists.flat().map((entry) => ({ entry, key: orderOf(entry) }));
  const kept = (bound === undefined ? keyed : keyed.filter((k) => k.key <= bound)).sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
  return { entries: kept.map((k) => k.entry), cut: bound !== undefined };
}
