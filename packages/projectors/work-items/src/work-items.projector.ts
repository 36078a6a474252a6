import { isEvent, type RecordedEvent, workEvents } from '@demiurge/contracts';
import { defineProjector, type ProjectionTx } from '@demiurge/event-store';
import { allowedEvents, evolveWork, initialWorkFacts, NONE, type WorkFacts, workLifecycle } from '@demiurge/lifecycle';
import {
  type ClaimableEntry,
  claimableByKindKey,
  claimableKey,
  isClaimable,
  isLeased,
  type LeaseEntry,
  leaseKey,
  WorkItemCollections,
  type WorkItemView,
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
 * Each item is the one work item fold (`evolveWork` in `@demiurge/lifecycle`, the same fold the command side
 * loads items with): an event the machine refuses, one naming a stale claim token, or one for an item that
 * was never enqueued, leaves the read model unchanged.
 */
export const workItemsProjector = defineProjector({
  name: 'work-items',
  version: 1,
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
