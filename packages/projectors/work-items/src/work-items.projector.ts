import { isEvent, type RecordedEvent, workEvents } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import { allowedEvents, evolveWork, initialWorkFacts, NONE, type WorkFacts, workLifecycle } from '@demiurge/lifecycle';
import {
  type ClaimableEntry,
  isClaimable,
  isLeased,
  type LeaseEntry,
  leasedKey,
  WorkItemCollections,
  type WorkItemView,
  waitingKey,
} from './work-item.view.js';

const workEventTypes = workEvents.map((e) => e.type);

/** The fold's facts of a stored item (the view keeps every fact the fold reads back). */
function factsOf(item: WorkItemView): WorkFacts {
  return {
    status: item.status,
    workId: item.workId,
    kind: item.kind,
    subjectId: item.subjectId,
    payload: item.payload,
    attempts: item.attempts,
    claimToken: item.claimToken,
    owner: item.owner,
    leaseUntil: item.leaseUntil,
    nextAttemptAt: item.nextAttemptAt,
    dueAt: item.dueAt,
    lastError: item.lastError,
    externalRef: item.externalRef,
    enqueuedAt: item.enqueuedAt,
  };
}

/** The view of the item after the fold: its facts, the time and version of the event, what the machine allows now. */
function viewOf(facts: WorkFacts, event: RecordedEvent): WorkItemView | undefined {
  const { status, workId, kind, subjectId, dueAt, enqueuedAt } = facts;
  if (status === NONE || workId === null || kind === null || subjectId === null) return undefined;
  if (dueAt === null || enqueuedAt === null) return undefined;
  return {
    workId,
    kind,
    subjectId,
    status,
    attempts: facts.attempts,
    claimToken: facts.claimToken,
    owner: facts.owner,
    leaseUntil: facts.leaseUntil,
    nextAttemptAt: facts.nextAttemptAt,
    dueAt,
    lastError: facts.lastError,
    externalRef: facts.externalRef,
    payload: facts.payload,
    enqueuedAt,
    updatedAt: event.recordedAt,
    version: event.streamVersion,
    allowed: allowedEvents(workLifecycle, status),
  };
}

interface QueueSlot {
  readonly id: string;
  readonly doc: ClaimableEntry | LeaseEntry;
}

/** The `queue` entry an item has (if any): waiting by due time, or leased by lease end. */
function queueSlot(item: WorkItemView): QueueSlot | undefined {
  if (isClaimable(item.status)) {
    return {
      id: waitingKey(item.kind, item.dueAt, item.workId),
      doc: { workId: item.workId, kind: item.kind, dueAt: item.dueAt },
    };
  }
  if (isLeased(item.status) && item.leaseUntil !== null) {
    return {
      id: leasedKey(item.kind, item.leaseUntil, item.workId),
      doc: { workId: item.workId, kind: item.kind, status: item.status, leaseUntil: item.leaseUntil },
    };
  }
  return undefined;
}

const sameDoc = (a: ClaimableEntry | LeaseEntry, b: ClaimableEntry | LeaseEntry): boolean =>
  a.workId === b.workId &&
  a.kind === b.kind &&
  (a as LeaseEntry).status === (b as LeaseEntry).status &&
  (a as ClaimableEntry).dueAt === (b as ClaimableEntry).dueAt &&
  (a as LeaseEntry).leaseUntil === (b as LeaseEntry).leaseUntil;

/** Moves the item's `queue` entry from where the old item had it to where the new one has it. */
function reindex(tx: ProjectionTx, before: WorkItemView | undefined, after: WorkItemView): void {
  const old = before && queueSlot(before);
  const now = queueSlot(after);
  if (old && old.id !== now?.id) tx.delete(WorkItemCollections.queue, old.id);
  if (now && (old?.id !== now.id || !sameDoc(old.doc, now.doc))) tx.put(WorkItemCollections.queue, now.id, now.doc);
}

/**
 * The `runtime_work_items` read model: one {@link WorkItemView} per work item, and the index the durable work
 * runtime claims from: `queue`, per kind the leases (by lease end) then the waiting items (by due time).
 * Version 2 replaced version 1's three indexes (`claimable`, `claimable-by-kind`, `leases`): one page of the
 * file written per claim and per success instead of three and one more.
 * Each item is the one work item fold (`evolveWork` in `@demiurge/lifecycle`, the same fold the command side
 * loads items with): an event the machine refuses, one naming a stale claim token, or one for an item that
 * was never enqueued, leaves the read model unchanged.
 */
export const workItemsProjector = defineProjector({
  name: 'work-items',
  version: 2,
  handles: workEvents.map((e) => e.type),
  apply(event, tx) {
    if (!isEvent(event, ...workEventTypes)) return;
    const { workId } = event.data;
    const item = tx.get<WorkItemView>(WorkItemCollections.items, workId);
    const facts = evolveWork(item ? factsOf(item) : initialWorkFacts, event);
    const next = facts && viewOf(facts, event);
    if (!next) return;
    reindex(tx, item, next);
    tx.put(WorkItemCollections.items, workId, next);
  },
});
