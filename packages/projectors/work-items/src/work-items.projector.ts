import { asDomainEvent, type EventOfType, isEvent, type RecordedEvent, workEvents } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import { allowedEvents, NONE, nextState, type WorkEventType, type WorkState, workLifecycle } from '@demiurge/lifecycle';
import {
  type ClaimableEntry,
  claimableByKindKey,
  claimableKey,
  isClaimable,
  isLeased,
  type LeaseEntry,
  leaseKey,
  WorkItemCollections,
  type WorkItemStatus,
  type WorkItemView,
} from './work-item.view.js';

/** A time from event data as `Date#toISOString()` (the schema accepts any ISO precision; keys need one). */
const isoTime = (time: string): string => new Date(time).toISOString();

const workEventTypes = workEvents.map((e) => e.type);

function created(event: EventOfType<'work.enqueued'>, status: WorkItemStatus): WorkItemView {
  const d = event.data;
  const nextAttemptAt = d.notBefore === undefined ? null : isoTime(d.notBefore);
  return {
    workId: d.workId,
    kind: d.kind,
    subjectId: d.subjectId,
    status,
    attempts: 0,
    claimToken: null,
    owner: null,
    leaseUntil: null,
    nextAttemptAt,
    dueAt: nextAttemptAt ?? event.recordedAt,
    lastError: null,
    externalRef: null,
    payload: d.payload ?? null,
    enqueuedAt: event.recordedAt,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(workLifecycle, status),
  };
}

/** The fields one accepted event sets, before the per-status rules in {@link evolve}. */
function changes(item: WorkItemView, recorded: RecordedEvent, status: WorkItemStatus): Partial<WorkItemView> {
  const event = asDomainEvent(recorded);
  switch (event.type) {
    case 'work.claimed': {
      const d = event.data;
      return {
        attempts: item.attempts + 1,
        claimToken: d.claimToken,
        owner: d.owner,
        leaseUntil: isoTime(d.leaseUntil),
      };
    }
    case 'work.heartbeat':
      return { leaseUntil: isoTime(event.data.leaseUntil) };
    case 'work.succeeded':
      return { externalRef: event.data.externalRef ?? null };
    case 'work.failed': {
      const d = event.data;
      return {
        lastError: d.error,
        nextAttemptAt: status === 'retry_scheduled' && d.retryAt !== undefined ? isoTime(d.retryAt) : null,
      };
    }
    case 'work.resolved': {
      const d = event.data;
      return { nextAttemptAt: status === 'retry_scheduled' && d.retryAt !== undefined ? isoTime(d.retryAt) : null };
    }
    case 'work.corrupt':
      return { lastError: { code: 'corrupt', message: event.data.detail } };
    default:
      return {};
  }
}

/**
 * The item after an event the machine accepted: the event's own fields, then the status rules: a claim
 * (token, owner, lease) lives only while claimed/running/sending, a next attempt only while waiting for
 * a claim (a claim starts the attempt it scheduled).
 */
function evolve(item: WorkItemView, event: RecordedEvent, status: WorkItemStatus): WorkItemView {
  const next: WorkItemView = {
    ...item,
    ...changes(item, event, status),
    status,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(workLifecycle, status),
  };
  const leased = isLeased(status);
  const nextAttemptAt = isClaimable(status) ? next.nextAttemptAt : null;
  return {
    ...next,
    claimToken: leased ? next.claimToken : null,
    owner: leased ? next.owner : null,
    leaseUntil: leased ? next.leaseUntil : null,
    nextAttemptAt,
    dueAt: nextAttemptAt ?? item.enqueuedAt,
  };
}

interface IndexEntry {
  readonly id: string;
  readonly doc: ClaimableEntry | LeaseEntry;
}

/** The secondary indexes: for each collection, the entry an item has there (if any). */
const indexes: readonly { collection: string; entry: (item: WorkItemView) => IndexEntry | undefined }[] = [
  {
    collection: WorkItemCollections.claimable,
    entry: (item) =>
      isClaimable(item.status) ? { id: claimableKey(item.dueAt, item.workId), doc: claimableDoc(item) } : undefined,
  },
  {
    collection: WorkItemCollections.claimableByKind,
    entry: (item) =>
      isClaimable(item.status)
        ? { id: claimableByKindKey(item.kind, item.dueAt, item.workId), doc: claimableDoc(item) }
        : undefined,
  },
  {
    collection: WorkItemCollections.leases,
    entry: (item) =>
      isLeased(item.status) && item.leaseUntil !== null
        ? {
            id: leaseKey(item.leaseUntil, item.workId),
            doc: { workId: item.workId, kind: item.kind, status: item.status, leaseUntil: item.leaseUntil },
          }
        : undefined,
  },
];

function claimableDoc(item: WorkItemView): ClaimableEntry {
  return { workId: item.workId, kind: item.kind, dueAt: item.dueAt };
}

/** Moves each index entry from where the old item had it to where the new one has it. */
function reindex(tx: ProjectionTx, before: WorkItemView | undefined, after: WorkItemView): void {
  for (const { collection, entry } of indexes) {
    const old = before && entry(before);
    const now = entry(after);
    if (old && old.id !== now?.id) tx.delete(collection, old.id);
    if (now && (old?.id !== now.id || JSON.stringify(old.doc) !== JSON.stringify(now.doc))) {
      tx.put(collection, now.id, now.doc);
    }
  }
}

/**
 * The `runtime_work_items` read model: one {@link WorkItemView} per work item, and the indexes the
 * durable work runtime queries: `claimable` (by due time), `claimable-by-kind` and `leases` (by lease end).
 * Statuses come from the work machine (`nextState`); an event it refuses, or one for an item that was
 * never enqueued, leaves the read model unchanged.
 */
export const workItemsProjector = defineProjector({
  name: 'work-items',
  version: 1,
  handles: workEvents.map((e) => e.type),
  apply(event, tx) {
    if (!isEvent(event, ...workEventTypes)) return;
    const { workId } = event.data;
    const item = tx.get<WorkItemView>(WorkItemCollections.items, workId);
    const from: WorkState = item?.status ?? NONE;
    const to = nextState(workLifecycle, from, { type: event.type as WorkEventType, data: event.data });
    if (to === undefined || to === NONE) return;
    const next = item ? evolve(item, event, to) : isEvent(event, 'work.enqueued') ? created(event, to) : undefined;
    if (!next) return;
    reindex(tx, item, next);
    tx.put(WorkItemCollections.items, workId, next);
  },
});
