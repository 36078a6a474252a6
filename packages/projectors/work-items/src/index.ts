export {
  CLAIMABLE_STATUSES,
  type ClaimableEntry,
  isClaimable,
  isLeased,
  isWaitingEntry,
  LEASED_STATUSES,
  type LeaseEntry,
  leasedKey,
  leasedPrefix,
  mergeQueueListings,
  type QueueEntry,
  type QueueListing,
  queueKindPrefix,
  type WorkError,
  WorkItemCollections,
  type WorkItemStatus,
  type WorkItemView,
  waitingKey,
  waitingPrefix,
} from './work-item.view.js';
export { workItemsProjector } from './work-items.projector.js';
export { type QueueListOptions, type WorkItemsReader, workItemsReader } from './work-items.reader.js';
