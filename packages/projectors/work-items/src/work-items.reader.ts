import { type ProjectionSource, type TypedCollection, typedCollection } from '@demiurge/event-store';
import { type ClaimableEntry, type LeaseEntry, WorkItemCollections, type WorkItemView } from './work-item.view.js';
import { workItemsProjector } from './work-items.projector.js';

/**
 * The `work-items` read model, typed. The collections list in id order: `claimable` by due time,
 * `claimableByKind` by kind then due time, `leases` by lease expiry; page with `after` and `limit`.
 */
export interface WorkItemsReader {
  /** One work item, or undefined. */
  get(workId: string): Promise<WorkItemView | undefined>;
  /** Every work item, in id order. */
  all(): Promise<WorkItemView[]>;
  readonly items: TypedCollection<WorkItemView>;
  readonly claimable: TypedCollection<ClaimableEntry>;
  readonly claimableByKind: TypedCollection<ClaimableEntry>;
  readonly leases: TypedCollection<LeaseEntry>;
}

/**
 * The typed reader of the `work-items` projection.
 * @example
 * const due = await workItemsReader(store).claimable.list({ limit: 10 });
 */
export function workItemsReader(store: ProjectionSource): WorkItemsReader {
  const reader = store.projection(workItemsProjector.name);
  const items = typedCollection<WorkItemView>(reader, WorkItemCollections.items);
  return {
    get: (workId) => items.get(workId),
    all: () => items.list(),
    items,
    claimable: typedCollection<ClaimableEntry>(reader, WorkItemCollections.claimable),
    claimableByKind: typedCollection<ClaimableEntry>(reader, WorkItemCollections.claimableByKind),
    leases: typedCollection<LeaseEntry>(reader, WorkItemCollections.leases),
  };
}
