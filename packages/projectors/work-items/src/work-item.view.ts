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

/** An entry of `claimable` and `claimable-by-kind`. */
export interface ClaimableEntry {
  readonly workId: string;
  readonly kind: string;
  readonly dueAt: string;
}

/** An entry of `leases`. */
export interface LeaseEntry {
  readonly workId: string;
  readonly kind: string;
  readonly status: WorkItemStatus;
  readonly leaseUntil: string;
}

/** Collections of the `work-items` projector. */
export const WorkItemCollections = {
  /** id = workId → {@link WorkItemView} */
  items: 'items',
  /** id = {@link claimableKey} → {@link ClaimableEntry}, while queued or retry_scheduled */
  claimable: 'claimable',
  /** id = {@link claimableByKindKey} → {@link ClaimableEntry}, while queued or retry_scheduled */
  claimableByKind: 'claimable-by-kind',
  /** id = {@link leaseKey} → {@link LeaseEntry}, while claimed, running or sending */
  leases: 'leases',
} as const;

/** The statuses in which an item waits for a claim (and is in `claimable`). */
export const CLAIMABLE_STATUSES: readonly WorkItemStatus[] = ['queued', 'retry_scheduled'];
/** The statuses in which an item is held by a claim (and is in `leases`). */
export const LEASED_STATUSES: readonly WorkItemStatus[] = ['claimed', 'running', 'sending'];

/** Whether an item in this status waits for a claim (is in `claimable`). */
export const isClaimable = (status: WorkItemStatus): boolean => CLAIMABLE_STATUSES.includes(status);
/** Whether an item in this status is held by a claim (is in `leases`). */
export const isLeased = (status: WorkItemStatus): boolean => LEASED_STATUSES.includes(status);

/**
 * The `claimable` id: due time then work id, so listing in id order is listing by due time.
 * @example
 * const due = await reader.list<ClaimableEntry>(WorkItemCollections.claimable, { limit: 10 });
 * const ready = due.filter((e) => e.dueAt <= now.toISOString());
 */
export const claimableKey = (dueAt: string, workId: string): string => `${dueAt}/${workId}`;

/** The prefix of one kind's entries in `claimable-by-kind`. */
export const claimableByKindPrefix = (kind: string): string => `${kind}/`;

/**
 * The `claimable-by-kind` id: kind, due time, work id.
 * @example
 * await reader.list(WorkItemCollections.claimableByKind, { prefix: claimableByKindPrefix('delivery.send') });
 */
export const claimableByKindKey = (kind: string, dueAt: string, workId: string): string =>
  `${claimableByKindPrefix(kind)}${dueAt}/${workId}`;

/**
 * The `leases` id: lease end then work id, so the first entries are the first to expire.
 * @example
 * const expiring = await reader.list<LeaseEntry>(WorkItemCollections.leases, { limit: 50 });
 */
export const leaseKey = (leaseUntil: string, workId: string): string => `${leaseUntil}/${workId}`;
