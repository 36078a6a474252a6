import { type ProjectionSource, type TypedCollection, typedCollection } from '@demiurge/event-store';
import {
  type ClaimableEntry,
  type LeaseEntry,
  leasedPrefix,
  mergeQueueListings,
  type QueueEntry,
  type QueueListing,
  queueKindPrefix,
  WorkItemCollections,
  type WorkItemView,
  waitingPrefix,
} from './work-item.view.js';
import { workItemsProjector } from './work-items.projector.js';

/** Which entries of `queue` to list: of one kind, or of every kind merged in order; the first `limit`. */
export interface QueueListOptions {
  readonly kind?: string | undefined;
  readonly limit: number;
  /** With `kind`: list past this key of that kind's range (`waitingKey`/`leasedKey` of the last entry seen). */
  readonly after?: string | undefined;
}

/**
 * The `work-items` read model, typed. `queue` lists in id order: per kind, its leases by lease end, then its
 * waiting items by due time; `waiting` and `leased` list one sort, of one kind or of all kinds merged.
 */
export interface WorkItemsReader {
  /** One work item, or undefined. */
  get(workId: string): Promise<WorkItemView | undefined>;
  /** Every work item, in id order. */
  all(): Promise<WorkItemView[]>;
  readonly items: TypedCollection<WorkItemView>;
  readonly queue: TypedCollection<QueueEntry>;
  /** The kinds that have entries in `queue` (one short read per kind). */
  kinds(): Promise<string[]>;
  /** Items waiting for a claim, first due first. */
  waiting(options: QueueListOptions): Promise<QueueListing<ClaimableEntry>>;
  /** Items held by a claim, first to expire first. */
  leased(options: QueueListOptions): Promise<QueueListing<LeaseEntry>>;
}

/**
 * The typed reader of the `work-items` projection.
 * @example
 * const { entries } = await workItemsReader(store).waiting({ kind: 'delivery.send', limit: 10 });
 */
export function workItemsReader(store: ProjectionSource): WorkItemsReader {
  const reader = store.projection(workItemsProjector.name);
  const items = typedCollection<WorkItemView>(reader, WorkItemCollections.items);
  const queue = typedCollection<QueueEntry>(reader, WorkItemCollections.queue);
  const kinds = async (): Promise<string[]> => {
    const found: string[] = [];
    for (let after: string | undefined; ; ) {
      const [first] = await queue.list({ limit: 1, ...(after === undefined ? {} : { after }) });
      if (!first) return found;
      found.push(first.kind);
      // Past every id of this kind: its escaped prefix holds no '/', and what follows it is printable ASCII
      // (below DEL), while a kind that sorts after it differs before that '/' or has a character above '/' there.
      after = `${queueKindPrefix(first.kind)}\x7f`;
    }
  };
  const listing =
    <T extends QueueEntry>(prefixOf: (kind: string) => string) =>
    async (options: QueueListOptions): Promise<QueueListing<T>> => {
      const list = (kind: string, after?: string) =>
        queue.list({
          prefix: prefixOf(kind),
          limit: options.limit,
          ...(after === undefined ? {} : { after }),
        }) as Promise<T[]>;
      if (options.kind !== undefined) {
        return mergeQueueListings([await list(options.kind, options.after)], options.limit);
      }
      const merged = mergeQueueListings(await Promise.all((await kinds()).map((kind) => list(kind))), options.limit);
      // The merge can keep more than the limit (every kind's list up to the earliest cut): the first `limit` of it.
      if (merged.entries.length <= options.limit) return merged;
      return { entries: merged.entries.slice(0, options.limit), cut: true };
    };
  return {
    get: (workId) => items.get(workId),
    all: () => items.list(),
    items,
    queue,
    kinds,
    waiting: listing<ClaimableEntry>(waitingPrefix),
    leased: listing<LeaseEntry>(leasedPrefix),
  };
}
